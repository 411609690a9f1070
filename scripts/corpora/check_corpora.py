#!/usr/bin/python3
"""Checks a corpus folder written by scripts/make_corpora.sh and prints its figures as JSON.

    check_corpora.py DIR        DIR/nmt/{train,valid,test}.tsv and DIR/ocr/{...}.tsv

NMT: every line is `source<TAB>target`, both non-empty, sources distinct and the splits
disjoint. OCR: every line is `image<TAB>text` with the image present (relative to the TSV's
folder), an 8-bit grey PNG 32 pixels high; no test or valid text in train. Fails naming the
file and line of the first problem.
"""
import json
import os
import sys

from PIL import Image

SPLITS = ("train", "valid", "test")


def fail(message):
    sys.exit(f"check_corpora.py: {message}")


def rows(path):
    """(line number, fields) of a two-column TSV."""
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 2 or not fields[0] or not fields[1]:
                fail(f"{path}:{number}: expected two non-empty fields separated by one tab")
            yield number, fields


def check_nmt(folder):
    seen, figures = {}, {}
    for split in SPLITS:
        path = os.path.join(folder, f"{split}.tsv")
        count = words = 0
        for number, (source, target) in rows(path):
            if source in seen:
                fail(f"{path}:{number}: source also at {seen[source]}")
            seen[source] = f"{path}:{number}"
            count += 1
            words += len(source.split())
        figures[split] = {"pairs": count, "source_words": words}
    return figures


def check_image(path, where):
    try:
        with Image.open(path) as image:
            if image.mode != "L" or image.height != 32:
                fail(f"{where}: {path} is {image.mode} {image.width}x{image.height}, "
                     "not grey 32 pixels high")
            return image.width
    except OSError as e:
        fail(f"{where}: cannot read {path}: {e}")


def check_ocr(folder):
    texts, figures = {}, {}
    for split in SPLITS:
        path = os.path.join(folder, f"{split}.tsv")
        texts[split] = set()
        count = chars = width = 0
        for number, (image, text) in rows(path):
            width += check_image(os.path.join(folder, image), f"{path}:{number}")
            texts[split].add(text)
            count += 1
            chars += len(text)
        figures[split] = {"lines": count, "distinct_texts": len(texts[split]),
                          "chars": chars, "mean_width": round(width / max(count, 1), 1)}
    for held_out in ("valid", "test"):
        shared = texts[held_out] & texts["train"]
        if shared:
            fail(f"{folder}: {len(shared)} {held_out} texts also in train, e.g. "
                 f"'{sorted(shared)[0]}'")
    return figures


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    root = sys.argv[1]
    summary = {"nmt": check_nmt(os.path.join(root, "nmt")),
               "ocr": check_ocr(os.path.join(root, "ocr"))}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
