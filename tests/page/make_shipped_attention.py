"""The shipped model's attention for a short prompt, by the float64 PyTorch reference: what the page
test compares the heatmap with after a long generation, when it shows the window of an early token
again (tests/page/page.test.mjs, "past the context").

    /usr/bin/python3 tests/page/make_shipped_attention.py [--glassbox build/native/glassbox]

Writes tests/page/shipped-attention.json: {prompt, tokens, attention [n_layer][n_head][T][T]}.
The prompt's tokens come from `glassbox tokenize` (the tokenizer is checked against tiktoken on its own).
"""

import argparse
import json
import os
import subprocess
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import check_model_pytorch as check  # noqa: E402  (reads safetensors and config.json)
import make_fixtures as mf  # noqa: E402  (the reference forward pass)

MODEL = os.path.join(ROOT, "web/models/brown-small")
PROMPT = "The jury said"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--glassbox", default=os.path.join(ROOT, "build/native/glassbox"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    config = json.load(open(os.path.join(MODEL, "config.json")))
    weights = check.read_safetensors(os.path.join(MODEL, "model.safetensors"))
    ids = json.loads(
        subprocess.run(
            [args.glassbox, "tokenize", "-m", MODEL], input=PROMPT.encode(), capture_output=True, check=True
        ).stdout
    )
    _, probs = mf.forward(check.spec_of(config), weights, ids)  # per layer: (n_head, T, T)
    attention = [[[[round(float(p), 7) for p in row] for row in head] for head in layer] for layer in probs]
    out = os.path.join(ROOT, "tests/page/shipped-attention.json")
    with open(out, "w") as f:
        json.dump({"prompt": PROMPT, "tokens": ids, "attention": attention}, f)
        f.write("\n")
    print(f"{out}: {len(ids)} tokens, {len(attention)} layers x {len(attention[0])} heads")


if __name__ == "__main__":
    main()
