"""Read a decoder fixture directory back as a loader would, independently of how
make_decoder_fixtures.py wrote it: config.json -> the reference's shape, with transformers' field
names, defaults and both config forms (classic rope_theta / rope_scaling / rotary_pct /
rotary_emb_base, and v5's rope_parameters with partial_rotary_factor); model.safetensors or the
sharded index -> {name: float64 tensor}. make_decoder_fixtures.py runs every written fixture
through this and the reference again, so config.json and the checkpoint are known to describe the
model the expected outputs come from.
"""

import json
import os
import struct

import numpy as np
import torch

# safetensors dtype -> numpy dtype of its bytes
NUMPY = {"F32": "<f4", "F16": "<f2", "BF16": "<i2", "BOOL": "?"}


def read_safetensors(path):
    """{name: float64 tensor} of one .safetensors file (BF16 through its bit pattern)."""
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        start, end = (8 + n + o for o in e["data_offsets"])
        arr = np.frombuffer(data[start:end], dtype=NUMPY[e["dtype"]]).reshape(e["shape"])
        t = torch.from_numpy(arr.copy())
        if e["dtype"] == "BF16":
            t = t.view(torch.bfloat16)
        out[name] = t.to(torch.float64)
    return out


def read_weights(directory):
    """model.safetensors, or every shard model.safetensors.index.json names (each tensor from
    the shard its weight_map gives)."""
    index = os.path.join(directory, "model.safetensors.index.json")
    if not os.path.exists(index):
        return read_safetensors(os.path.join(directory, "model.safetensors"))
    weight_map = json.load(open(index))["weight_map"]
    shards = {f: read_safetensors(os.path.join(directory, f)) for f in sorted(set(weight_map.values()))}
    return {name: shards[f][name] for name, f in weight_map.items()}


def rope_of(params, theta_default):
    """rope_parameters / rope_scaling dict -> the reference's rope dict."""
    kind = params.get("rope_type") or params.get("type") or "default"
    rope = dict(type=kind, theta=params.get("rope_theta", theta_default))
    for k in ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"):
        if k in params:
            rope[k] = params[k]
    return rope


def read_config(directory):
    """config.json -> the shape decoder_reference.forward reads."""
    c = json.load(open(os.path.join(directory, "config.json")))
    t = c["model_type"]
    eos = c["eos_token_id"] if isinstance(c["eos_token_id"], list) else [c["eos_token_id"]]
    s = dict(model_type=t, vocab_size=c["vocab_size"], hidden_size=c["hidden_size"], eos_ids=eos)
    if t == "gpt_neo":  # attention_types [[["global", "local"], n], ...] expanded
        layers = [kind for kinds, n in c["attention_types"] for _ in range(n) for kind in kinds]
        s.update(
            n_layers=c["num_layers"],
            n_heads=c["num_heads"],
            head_dim=c["hidden_size"] // c["num_heads"],
            eps=c.get("layer_norm_epsilon", 1e-5),
            act=c.get("activation_function", "gelu_new"),
            attention_layers=layers,
            window_size=c.get("window_size", 256),
        )
        assert len(layers) == s["n_layers"]
        return s
    s.update(n_layers=c["num_hidden_layers"], n_heads=c["num_attention_heads"], act=c["hidden_act"])
    if t == "gpt_neox":  # v5: rope_parameters; classic: rotary_emb_base, rotary_pct (default 0.25)
        params = dict(c.get("rope_parameters") or c.get("rope_scaling") or {})
        params.setdefault("rope_theta", c.get("rotary_emb_base", 10000.0))
        pct = params.get("partial_rotary_factor", c.get("rotary_pct", 0.25))
        d = c["hidden_size"] // c["num_attention_heads"]
        s.update(
            n_kv_heads=s["n_heads"],
            head_dim=d,
            rotary_ndims=int(d * pct),
            rope=rope_of(params, 10000.0),
            eps=c.get("layer_norm_eps", 1e-5),
            parallel_residual=c.get("use_parallel_residual", True),
            attention_bias=c.get("attention_bias", True),
            tied=c.get("tie_word_embeddings", False),
        )
        return s
    params = c.get("rope_parameters") or c.get("rope_scaling") or {}
    use_window = t == "mistral" or c.get("use_sliding_window", False)
    s.update(
        n_kv_heads=c.get("num_key_value_heads") or s["n_heads"],
        head_dim=c.get("head_dim") or (128 if t == "qwen3" else c["hidden_size"] // s["n_heads"]),  # Qwen3Config: 128
        rope=rope_of(params, c.get("rope_theta", 10000.0)),
        eps=c.get("rms_norm_eps", 1e-6),
        tied=c.get("tie_word_embeddings", False),
        attention_bias=c.get("attention_bias", False),
        mlp_bias=c.get("mlp_bias", False),
        sliding_window=c.get("sliding_window") if use_window else None,
        use_sliding_window=use_window,
        max_window_layers=c.get("max_window_layers", 28) if t != "mistral" else 0,  # Qwen2Config/Qwen3Config: 28
    )
    return s
