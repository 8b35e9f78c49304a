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
ES_TEMPLATES = [
    "Proponemos un enfoque {adj} para {verb} los {noun} en el contexto de la {field}.",
    "Este estudio examina el papel de los {noun} en la {field} a partir de {num} {noun2}.",
    "Los resultados muestran que los {noun} {verb3} la calidad de los {noun2}.",
    "Describimos un método {adj} basado en el análisis de los {noun} y de los {noun2}.",
    "La evaluación incluye {num} {noun} recogidos en {place} entre {year} y {year2}.",
    "Además, la {field} ofrece un marco {adj} para comprender los {noun}.",
    "Por último, se discuten las limitaciones del estudio y las perspectivas de la {field}.",
    "Se observa que la distribución de los {noun} depende de la {field} considerada.",
]
ES_WORDS = {
    "adj": ["nuevo", "robusto", "estadístico", "comparativo", "cualitativo", "general",
            "empírico", "histórico"],
    "verb": ["analizar", "modelar", "clasificar", "describir", "comparar", "estimar"],
    "verb3": ["influyen en", "determinan", "mejoran", "reducen", "explican"],
    "noun": ["documentos", "pacientes", "parámetros", "textos", "suelos", "hogares",
             "indicadores", "servicios"],
    "noun2": ["observaciones", "muestras", "entrevistas", "registros", "encuestas"],
    "field": ["salud pública", "sociología urbana", "biología vegetal", "economía laboral",
              "educación superior"],
    "place": ["Quito", "Bogotá", "Asunción", "Montevideo", "La Paz", "Lima", "Madrid"],
}
PT_TEMPLATES = [
    "Propomos uma abordagem {adj} para {verb} os {noun} no contexto da {field}.",
    "Este estudo examina o papel dos {noun} na {field} a partir de {num} {noun2}.",
    "Os resultados mostram que os {noun} {verb3} a qualidade dos {noun2}.",
    "Descrevemos um método {adj} baseado na análise dos {noun} e dos {noun2}.",
    "A avaliação abrange {num} {noun} coletados em {place} entre {year} e {year2}.",
    "Além disso, a {field} oferece um quadro {adj} para compreender os {noun}.",
    "Por fim, discutem-se as limitações do estudo e as perspectivas da {field}.",
    "Observa-se que a distribuição dos {noun} depende da {field} considerada.",
]
PT_WORDS = {
    "adj": ["nova", "robusta", "estatística", "comparativa", "qualitativa", "geral",
            "empírica", "histórica"],
    "verb": ["analisar", "modelar", "classificar", "descrever", "comparar", "estimar"],
    "verb3": ["influenciam", "determinam", "melhoram", "reduzem", "explicam"],
    "noun": ["documentos", "pacientes", "parâmetros", "textos", "solos", "domicílios",
             "indicadores", "serviços"],
    "noun2": ["observações", "amostras", "entrevistas", "registros", "inquéritos"],
    "field": ["saúde pública", "sociologia urbana", "biologia vegetal", "economia do trabalho",
              "educação superior"],
    "place": ["Lisboa", "Porto", "Coimbra", "São Paulo", "Recife", "Belo Horizonte"],
}
KO_TEMPLATES = [
    "본 연구는 {field} 분야에서 {noun}을 {verb} 위한 {adj} 방법을 제안한다.",
    "이 연구에서는 {num}개의 {noun2}를 이용하여 {field}에서 {noun}의 역할을 분석하였다.",
    "실험 결과 {noun}은 {noun2}의 품질에 큰 영향을 미치는 것으로 나타났다.",
    "{year}년부터 {year2}년까지 {place}에서 수집한 {num}건의 {noun}을 평가하였다.",
    "제안한 방법은 기존 {noun}에 비해 {num}% 향상된 성능을 보였다.",
    "마지막으로 본 연구의 한계와 {field}의 향후 과제를 논의한다.",
    "또한 {field}는 {noun}을 이해하기 위한 {adj} 틀을 제공한다.",
]
KO_WORDS = {
    "adj": ["새로운", "효율적인", "통계적인", "체계적인", "비교적인", "실증적인"],
    "verb": ["분석하기", "분류하기", "예측하기", "측정하기", "비교하기"],
    "noun": ["데이터", "모형", "구조물", "시스템", "알고리즘", "신호", "재료"],
    "noun2": ["표본", "설문", "측정값", "영상", "문헌"],
    "field": ["환경공학", "토목공학", "정보통신", "식품과학", "교육학", "건축학"],
    "place": ["서울", "부산", "대전", "광주", "대구", "인천"],
}
LANGS = {
    "fr": (FR_TEMPLATES, FR_WORDS), "en": (EN_TEMPLATES, EN_WORDS),
    "es": (ES_TEMPLATES, ES_WORDS), "pt": (PT_TEMPLATES, PT_WORDS),
    "ko": (KO_TEMPLATES, KO_WORDS),
}
TITLES = {
    "es": "Un estudio {adj} de los {noun} en {field}",
    "pt": "Um estudo {adj} dos {noun} em {field}",
    "ko": "{field} 분야의 {noun}에 대한 {adj} 연구",
}


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
        if lang in TITLES:
            return TITLES[lang].format(adj=self.rng.choice(words["adj"]), noun=noun, field=field)
        return f"A {self.rng.choice(words['adj'])} study of {noun} in {field}"

    def authors(self) -> list[str]:
        first = ["Camille", "Louis", "Inès", "Hugo", "Léa", "Mathis", "Chloé", "Jules", "Zoé"]
        last = ["Martin", "Bernard", "Dubois", "Lefèvre", "Moreau", "Girard", "Roux", "Faure"]
        return [
            f"{self.rng.choice(first)} {self.rng.choice(last)}"
            for _ in range(self.rng.randint(1, 3))
        ]
