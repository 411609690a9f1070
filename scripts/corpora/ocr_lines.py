#!/usr/bin/python3
"""Printed text-line images for OCR, cut from the NMT corpus's English sentences.

    ocr_lines.py SENTENCES OUT_DIR [--train-lines 50000] [--valid-lines 1000]
                 [--test-lines 2000] [--held-out 0.044] [--seed 1] [--jobs N]

Sentences go to splits as nmt_pairs.py splits them (by the SHA-256 of the sentence), so OCR
test lines come from NMT test sentences. Each line's text is 20-45 characters of one sentence,
cut on word boundaries; a text in the test or valid split never appears in training, and texts
are distinct within test and within valid. Each image is rendered with PIL (FreeType) in one of
six TrueType fonts (DejaVu Sans/Serif/Mono, Liberation Sans/Serif/Mono) at a random size,
letter spacing, ink and paper grey, rotation, blur, stretch and noise, then scaled to 32 pixels
high keeping its aspect ratio: dark text on light, 8-bit grey PNG.

Writes OUT_DIR/{train,valid,test}.tsv (`image<TAB>text`, the image path relative to OUT_DIR)
and the images under OUT_DIR/{train,valid,test}/. Everything is a function of the sentences and
the seed, whatever --jobs is.
"""
import argparse
import multiprocessing
import os
import random
import sys

from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nmt_pairs import bucket  # noqa: E402  (the same split as the NMT pairs)

HEIGHT = 32
MIN_CHARS, MAX_CHARS = 20, 45
FONT_FILES = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSerif-Regular.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationMono-Regular.ttf",
]
_fonts = {}  # (file, size) -> FreeTypeFont, per process


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sentences", help="one English sentence per line")
    parser.add_argument("out_dir")
    parser.add_argument("--train-lines", type=int, default=50000)
    parser.add_argument("--valid-lines", type=int, default=1000)
    parser.add_argument("--test-lines", type=int, default=2000)
    parser.add_argument("--held-out", type=float, default=0.044,
                        help="as nmt_pairs.py split --held-out (default 0.044)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    return parser.parse_args()


def split_sentences(path, held_out):
    """{'train': [...], 'valid': [...], 'test': [...]} of the sentences at `path`."""
    splits = {"train": [], "valid": [], "test": []}
    with open(path, encoding="utf-8") as f:
        for sentence in f.read().splitlines():
            h = bucket(sentence)
            name = "test" if h < held_out else "valid" if h < 2 * held_out else "train"
            splits[name].append(sentence)
    return splits


def cut(sentence, rng):
    """A run of whole words of `sentence` of MIN_CHARS..MAX_CHARS characters, or None."""
    words = sentence.split()
    limit = rng.randint(MIN_CHARS, MAX_CHARS)
    start = rng.randrange(len(words))
    text = words[start]
    for word in words[start + 1:]:
        if len(text) + 1 + len(word) > limit:
            break
        text += " " + word
    return text if MIN_CHARS <= len(text) <= MAX_CHARS else None


def choose_texts(sentences, count, rng, banned, distinct):
    """`count` line texts cut from `sentences`, none in `banned` (and none twice when
    `distinct`)."""
    texts, used = [], set()
    tries = 0
    while len(texts) < count:
        tries += 1
        if tries > 100 * count + 1000:
            sys.exit(f"ocr_lines.py: cannot cut {count} lines from {len(sentences)} sentences")
        text = cut(sentences[rng.randrange(len(sentences))], rng)
        if text is None or text in banned or (distinct and text in used):
            continue
        texts.append(text)
        used.add(text)
    return texts


def font(path, size):
    key = (path, size)
    if key not in _fonts:
        _fonts[key] = ImageFont.truetype(path, size)
    return _fonts[key]


def draw_text(text, face, spacing, paper, ink):
    """`text` drawn on a canvas with a margin of half an em; `spacing` pixels added after each
    character (0: drawn as one string, with the font's kerning)."""
    size = face.size
    margin = size // 2
    width = face.getlength(text) + max(0, spacing) * len(text)
    image = Image.new("L", (int(width) + 2 * margin, 2 * size + margin), paper)
    draw = ImageDraw.Draw(image)
    if spacing == 0:
        draw.text((margin, margin), text, font=face, fill=ink)
        return image
    x = float(margin)
    for ch in text:
        draw.text((x, margin), ch, font=face, fill=ink)
        x += face.getlength(ch) + spacing
    return image


def crop_to_ink(image, paper, ink, rng):
    """`image` cut to its ink plus a random margin."""
    threshold = abs(paper - ink) // 3
    mask = ImageChops.difference(image, Image.new("L", image.size, paper))
    box = mask.point(lambda v: 255 if v > threshold else 0).getbbox()
    if box is None:
        return image
    size = (image.height * 2) // 5
    mx, my = rng.uniform(0.05, 0.5) * size, rng.uniform(0.05, 0.3) * size
    return image.crop((int(box[0] - mx), int(box[1] - my), int(box[2] + mx + 1),
                       int(box[3] + my + 1)))


def add_noise(image, amplitude, rng):
    """Uniform noise in [-amplitude, amplitude] grey levels on every pixel (seeded)."""
    if amplitude == 0:
        return image
    noise = Image.frombytes("L", image.size, rng.randbytes(image.width * image.height))
    noise = noise.point(lambda v: v * 2 * amplitude // 255)
    return ImageChops.add(image, noise, 1.0, -amplitude)


def render(text, seed):
    """One line image of `text`, a function of `seed`."""
    rng = random.Random(seed)
    face = font(rng.choice(FONT_FILES), rng.randint(20, 44))
    paper = rng.randint(170, 255)
    ink = rng.randint(0, min(110, paper - 90))
    spacing = 0 if rng.random() < 0.5 else round(rng.uniform(-0.04, 0.2) * face.size, 1)
    image = draw_text(text, face, spacing, paper, ink)
    image = image.rotate(rng.uniform(-2.0, 2.0), Image.BILINEAR, fillcolor=paper)
    image = crop_to_ink(image, paper, ink, rng)
    if rng.random() < 0.5:
        image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.2) * face.size / HEIGHT))
    stretch = rng.uniform(0.85, 1.15)
    width = max(1, round(image.width * stretch * HEIGHT / image.height))
    image = image.resize((width, HEIGHT), Image.LANCZOS)
    return add_noise(image, 0 if rng.random() < 0.4 else rng.randint(2, 24), rng)


def render_job(job):
    path, text, seed = job
    render(text, seed).save(path, optimize=False)
    return path


def main():
    args = parse_args()
    missing = [f for f in FONT_FILES if not os.path.exists(f)]
    if missing:
        sys.exit(f"ocr_lines.py: missing {missing[0]} "
                 "(install fonts-dejavu-core and fonts-liberation)")
    splits = split_sentences(args.sentences, args.held_out)
    rng = random.Random(f"texts:{args.seed}")
    texts = {"test": choose_texts(splits["test"], args.test_lines, rng, set(), True)}
    texts["valid"] = choose_texts(splits["valid"], args.valid_lines, rng, set(), True)
    held = set(texts["test"]) | set(texts["valid"])
    texts["train"] = choose_texts(splits["train"], args.train_lines, rng, held, False)
    jobs = []
    for name in ("train", "valid", "test"):
        os.makedirs(os.path.join(args.out_dir, name), exist_ok=True)
        with open(os.path.join(args.out_dir, f"{name}.tsv"), "w", encoding="utf-8") as tsv:
            for i, text in enumerate(texts[name]):
                image = f"{name}/{i:06d}.png"
                tsv.write(f"{image}\t{text}\n")
                jobs.append((os.path.join(args.out_dir, image), text, f"{args.seed}:{name}:{i}"))
    with multiprocessing.Pool(max(1, args.jobs)) as pool:
        for _ in pool.imap_unordered(render_job, jobs, chunksize=64):
            pass
    print("ocr_lines.py: " + ", ".join(f"{n} {len(texts[n])} lines from {len(splits[n])} "
                                       "sentences" for n in ("train", "valid", "test")),
          file=sys.stderr)


if __name__ == "__main__":
    main()
