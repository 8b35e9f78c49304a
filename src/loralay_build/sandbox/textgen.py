"""Deterministic generator of plausible scholarly prose in French and English.

Sentences come from templates filled with domain vocabulary, so language identification sees
real function words and the abstract matcher sees text that repeats only as much as real
papers do.
"""

from __future__ import annotations

import random

FR_TEMPLATES = [
    "Nous proposons une {adj} approche pour {verb} les {noun} dans le cadre de la {field}.",
    "Cette étude examine le rôle des {noun} dans la {field} à partir d'un corpus de {num} {noun2}.",
    "Les résultats montrent que les {noun} {verb3} fortement la qualité des {noun2}.",
    "Nous décrivons une méthode {adj} fondée sur l'analyse des {noun} et des {noun2}.",
    "L'évaluation porte sur {num} {noun} issus de {place} entre {year} et {year2}.",
    "Par ailleurs, la {field} offre un cadre {adj} pour comprendre les {noun}.",
    "Nos expériences révèlent une amélioration de {num} % par rapport aux {noun} existants.",
    "Il s'agit d'une question {adj} qui concerne à la fois les {noun} et les {noun2}.",
    "Enfin, nous discutons les limites de cette approche et les perspectives de {field}.",
    "Le modèle obtenu est appliqué à l'étude des {noun} observés en {place}.",
    "On constate que la distribution des {noun} dépend de la {field} considérée.",
    "Cette hypothèse est confirmée par une analyse {adj} des {noun2} recueillis.",
    "Dans la section suivante, nous présentons les {noun} et la démarche « {adj} » retenue.",
    "Les auteurs remercient les équipes de {place} pour leur aide précieuse.",
]
FR_WORDS = {
    "adj": [
        "nouvelle", "robuste", "statistique", "originale", "comparative", "qualitative",
        "expérimentale", "générale", "linguistique", "hiérarchique", "probabiliste",
        "empirique", "historique", "numérique", "théorique", "critique",
    ],
    "verb": [
        "analyser", "modéliser", "classer", "décrire", "comparer", "estimer", "représenter",
        "segmenter", "annoter", "mesurer",
    ],
    "verb3": ["influencent", "déterminent", "modifient", "améliorent", "réduisent", "expliquent"],
    "noun": [
        "documents", "corpus", "phénomènes", "variables", "réseaux", "paramètres", "textes",
        "données", "enquêtes", "pratiques", "sols", "populations", "archives", "structures",
        "mesures", "relations", "écosystèmes", "protocoles", "récits", "catégories",
    ],
    "noun2": [
        "annotations", "observations", "échantillons", "entretiens", "traductions", "cartes",
        "séries temporelles", "registres", "témoignages", "indicateurs",
    ],
    "field": [
        "linguistique de corpus", "sociologie urbaine", "biologie végétale",
        "géographie historique", "économie du travail", "recherche d'information",
        "physique des matériaux", "didactique des langues", "écologie forestière",
    ],
    "place": [
        "Lyon", "Bretagne", "Toulouse", "Nouvelle-Aquitaine", "Grenoble", "Montpellier",
        "Lille", "Strasbourg", "Nancy", "Marseille",
    ],
}
EN_TEMPLATES = [
    "We propose a {adj} approach to {verb} {noun} in the context of {field}.",
    "This study examines the role of {noun} in {field} using a corpus of {num} {noun2}.",
    "The results show that {noun} strongly {verb3} the quality of {noun2}.",
    "We describe a {adj} method based on the analysis of {noun} and {noun2}.",
    "The evaluation covers {num} {noun} collected in {place} between {year} and {year2}.",
    "Our experiments reveal an improvement of {num} % over existing {noun}.",
    "Finally, we discuss the limits of this approach and future work on {field}.",
]
EN_WORDS = {
    "adj": ["novel", "robust", "statistical", "comparative", "qualitative", "general"],
    "verb": ["analyse", "model", "classify", "describe", "compare", "estimate"],
    "verb3": ["influence", "determine", "improve", "reduce", "explain"],
    "noun": ["documents", "networks", "parameters", "texts", "surveys", "practices", "soils"],
    "noun2": ["annotations", "observations", "samples", "interviews", "translations", "maps"],
    "field": ["corpus linguistics", "urban sociology", "plant biology", "labour economics"],
    "place": ["Lyon", "Brittany", "Toulouse", "Grenoble", "Montpellier", "Lille"],
}
LANGS = {"fr": (FR_TEMPLATES, FR_WORDS), "en": (EN_TEMPLATES, EN_WORDS)}


class ProseGenerator:
    """Sentences, paragraphs and titles from a seeded random source."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def sentence(self, lang: str) -> str:
        templates, words = LANGS[lang]
        template = self.rng.choice(templates)
        year = self.rng.randint(1990, 2018)
        values = {key: self.rng.choice(options) for key, options in words.items()}
        return template.format(
            num=self.rng.randint(3, 950), year=year, year2=year + self.rng.randint(1, 6), **values
        )

    def paragraph(self, lang: str, sentences: int) -> str:
        return " ".join(self.sentence(lang) for _ in range(sentences))

    def title(self, lang: str) -> str:
        _, words = LANGS[lang]
        noun = self.rng.choice(words["noun"])
        field = self.rng.choice(words["field"])
        if lang == "fr":
            return f"Étude {self.rng.choice(words['adj'])} des {noun} en {field}"
        return f"A {self.rng.choice(words['adj'])} study of {noun} in {field}"

    def authors(self) -> list[str]:
        first = ["Camille", "Louis", "Inès", "Hugo", "Léa", "Mathis", "Chloé", "Jules", "Zoé"]
        last = ["Martin", "Bernard", "Dubois", "Lefèvre", "Moreau", "Girard", "Roux", "Faure"]
        return [
            f"{self.rng.choice(first)} {self.rng.choice(last)}"
            for _ in range(self.rng.randint(1, 3))
        ]
