"""Check a model directory against the PyTorch reference: the independent float64 implementation
of GPT-2 / GPT in scripts/make_fixtures.py reads config.json and model.safetensors the way
Hugging Face's GPT2LMHeadModel / OpenAIGPTLMHeadModel do (Conv1D weights [in, out], tied LM head),
and its logits must match what `glassbox forward` prints for the same tokens.

    /usr/bin/python3 scripts/check_model_pytorch.py web/models/brown-small [--glassbox build/native/glassbox]

This is how a model trained by `glassbox train` is shown to be a standard Hugging Face checkpoint
(the `transformers` package itself is not packaged by Debian, so it cannot be installed here).
"""

import argparse
import json
import os
import struct
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402  (the reference forward pass)

NUMPY = {"F32": "<f4", "F16": "<f2", "F64": "<f8"}


def read_safetensors(path):
    """{name: float64 tensor} of every F32/F16/BF16 tensor; the format read by hand."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        begin, end = e["data_offsets"]
        raw = data[base + begin : base + end]
        if e["dtype"] == "BF16":
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            arr = bits.view(np.float32)
        else:
            arr = np.frombuffer(raw, dtype=NUMPY[e["dtype"]])
        out[name.removeprefix("transformer.")] = torch.tensor(arr.astype(np.float64)).reshape(e["shape"])
    return out


def spec_of(config):
    """The reference's settings from a Hugging Face config.json."""
    gpt2 = config["model_type"] == "gpt2"
    return dict(
        model_type=config["model_type"],
        n_layer=config["n_layer"],
        n_head=config["n_head"],
        n_embd=config["n_embd"],
        layer_norm_epsilon=config.get("layer_norm_epsilon", 1e-5),
        act=config.get("activation_function", "gelu_new") if gpt2 else config.get("afn", "gelu"),
        scale_attn_weights=config.get("scale_attn_weights", True),
        scale_attn_by_inverse_layer_idx=config.get("scale_attn_by_inverse_layer_idx", False),
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--glassbox", default="build/native/glassbox")
    parser.add_argument("--prompt", default="The jury said that the city of Atlanta had been fair to everyone.")
    args = parser.parse_args()
    torch.set_num_threads(1)

    config = json.load(open(os.path.join(args.model, "config.json")))
    weights = read_safetensors(os.path.join(args.model, "model.safetensors"))
    ids = json.loads(
        subprocess.run(
            [args.glassbox, "tokenize", "-m", args.model], input=args.prompt.encode(), capture_output=True, check=True
        ).stdout
    )
    ours = json.loads(
        subprocess.run(
            [args.glassbox, "forward", "-m", args.model, "--tokens", ",".join(map(str, ids))],
            capture_output=True,
            check=True,
        ).stdout
    )["logits"]
    reference, _ = mf.forward(spec_of(config), weights, ids)
    diff = (torch.tensor(ours, dtype=torch.float64) - reference).abs().max().item()
    same_argmax = bool((torch.tensor(ours).argmax(-1) == reference.argmax(-1)).all())
    print(
        f"{args.model}: {len(ids)} tokens, {len(weights)} tensors; max |logit difference| {diff:.3g} "
        f"(logits range {reference.min():.2f}..{reference.max():.2f}); same argmax everywhere: {same_argmax}"
    )
    if not (diff < 1e-3 and same_argmax):
        sys.exit("check_model_pytorch: the logits differ from the PyTorch reference")


if __name__ == "__main__":
    main()
