from typing import Any

def bind(
    get_text: int, get_unicode: int, char_index: int, loose_box: int, char_angle: int,
    font_size: int, matrix: int,
) -> None: ...
def read_text(
    textpage: int, count: int, frame: tuple[float, float, float, float], quarter: int,
    width: float, height: float, compose: bool,
) -> tuple[
    int, int, bool, list[Any], bytes | None, bytes | None, bytes | None, int, int, bytes | None,
]: ...
def finish_lines(
    textpage: int, words: list[str], boxes: list[tuple[float, float, float, float]],
    starts: list[int], runs: list[tuple[int, int]], quarter: int, width: float, height: float,
) -> tuple[list[Any], int, int, bytes]: ...
def non_ascii(words: list[str]) -> list[str]: ...
def order_page(
    lines: list[Any], width: float, height: float,
    limits: tuple[float, float, float, float, float, float], infos: bytes | None = None,
) -> list[list[Any]] | None: ...
def extend_document(
    blocks: list[list[Any]], page: int, line_id: int, block_id: int,
    columns: tuple[list[Any], list[Any], list[Any], list[Any], list[Any], list[Any]],
) -> tuple[int, int] | None: ...
def minhash(text: str, a: bytes, b: bytes, shingle: int, mult: int) -> bytes | None: ...
def box_array(boxes: list[tuple[float, float, float, float]]) -> bytearray | None: ...
def tokens(
    words: list[str], keys: dict[str, str],
) -> tuple[list[str], list[int], list[int]] | None: ...
