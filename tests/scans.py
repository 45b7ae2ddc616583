"""Skany zrobione z prawdziwych PDF-ów: strony narysowane przez PDFium i zapisane przez Pillow jako PDF z samych
obrazów (bez warstwy tekstowej) – dla tests/test_ocr.py i bench/ocr.py."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def image_pdf(source: Path, pages: Sequence[int], target: Path, dpi: int = 150, angle: float = 0.0) -> Path:
    """PDF ze stron ``pages`` (od 0) pliku ``source`` jako obrazów w skali szarości ``dpi``, obróconych o ``angle``
    stopni (krzywo położona kartka); jak ze skanera: strona to jeden obraz."""
    import pypdfium2 as pdfium
    from PIL import Image

    pdf = pdfium.PdfDocument(source)
    try:
        # convert() copies the pixels out of PDFium's bitmap, which goes with the document
        images = [pdf[i].render(scale=dpi / 72, grayscale=True).to_pil().convert("L") for i in pages]
    finally:
        pdf.close()
    if angle:
        images = [im.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255) for im in images]
    images[0].save(target, save_all=True, append_images=images[1:], resolution=dpi)
    return target


def blank_scan(target: Path, dpi: int = 150) -> Path:
    """Skan pustej kartki A4: jeden biały obraz."""
    from PIL import Image

    Image.new("L", (round(8.27 * dpi), round(11.69 * dpi)), 255).save(target, resolution=dpi)
    return target
