#!/usr/bin/python3
"""Scores OCR predictions against an `image<TAB>text` reference TSV; prints one JSON line.

    ocr_score.py REFERENCE_TSV NAME=PREDICTIONS [NAME=PREDICTIONS ...] [--limit N]
                 [--fold-quotes]

A predictions file has one line per image, `image<TAB>predicted text`, the image named as in
the reference TSV (its path relative to the TSV's folder); the text may be empty, lines may
come in any order, and an image without a line counts as predicted empty ("missing").
Both sides are compared after stripping and collapsing white space runs to one space; with
--fold-quotes, typographic quotes (U+2018/2019/201A/201B, U+201C/201D/201E/201F) also count as
the ASCII ' and " (Tesseract prints them for straight quotes; the corpora's texts are ASCII).

For each NAME: char_accuracy = 1 - sum of Levenshtein distances / sum of reference
characters (over the corpus, floored at 0, as Tessera's OcrAccuracy), line_accuracy = exact
matches / lines, with the sums themselves. Standard library only.
"""
import argparse
import json
import sys


def fail(message):
    sys.exit(f"ocr_score.py: {message}")


QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
                        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"'})
fold_quotes = False  # set from --fold-quotes


def normalise(text):
    text = " ".join(text.split())
    return text.translate(QUOTES) if fold_quotes else text


def edit_distance(a, b):
    """Levenshtein distance between strings `a` and `b` (insert, delete, substitute: 1)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def read_tsv(path, allow_empty_text):
    """[(image, text)] of a two-column TSV, failing with file and line on a bad line."""
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                fields = line.rstrip("\n").split("\t")
                if len(fields) == 1 and allow_empty_text:
                    fields.append("")
                if len(fields) != 2 or not fields[0] or (not fields[1] and not allow_empty_text):
                    fail(f"{path}:{number}: expected 'image<TAB>text'")
                out.append((fields[0], fields[1]))
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    return out


def score(reference, predictions):
    """The figures of one system: `reference` [(image, text)], `predictions` {image: text}."""
    distance = chars = exact = missing = 0
    for image, text in reference:
        if image not in predictions:
            missing += 1
        truth, guess = normalise(text), normalise(predictions.get(image, ""))
        distance += edit_distance(truth, guess)
        chars += len(truth)
        exact += truth == guess
    lines = len(reference)
    return {"char_accuracy": round(max(0.0, 1 - distance / max(chars, 1)), 6),
            "line_accuracy": round(exact / max(lines, 1), 6),
            "edit_distance": distance, "exact_lines": exact, "missing": missing}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", help="image<TAB>text TSV")
    parser.add_argument("systems", nargs="+", metavar="NAME=PREDICTIONS")
    parser.add_argument("--limit", type=int, default=0, help="score the first N lines only")
    parser.add_argument("--fold-quotes", action="store_true",
                        help="count typographic quotes as ASCII ones")
    args = parser.parse_args()
    global fold_quotes
    fold_quotes = args.fold_quotes
    reference = read_tsv(args.reference, allow_empty_text=False)
    if args.limit > 0:
        reference = reference[:args.limit]
    result = {"reference": args.reference, "lines": len(reference),
              "fold_quotes": fold_quotes,
              "reference_chars": sum(len(normalise(t)) for _, t in reference)}
    for system in args.systems:
        name, sep, path = system.partition("=")
        if not sep or not name or not path:
            fail(f"'{system}' is not NAME=PREDICTIONS")
        result[name] = score(reference, dict(read_tsv(path, allow_empty_text=True)))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
