#!/usr/bin/env python3
"""Writes the fixture of examples/load_pytorch_weights.cpp: a small PyTorch MLP's weights
(pytorch_mlp.safetensors) and an input with PyTorch's output for it (pytorch_mlp_io.safetensors).

    python3 examples/data/make_pytorch_mlp.py   (torch and safetensors installed)
"""
import os

import torch
from safetensors.torch import save_file

here = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
x = torch.randn(5, 4)
with torch.no_grad():
    y = model(x)
save_file(model.state_dict(), os.path.join(here, "pytorch_mlp.safetensors"), {"format": "pt"})
save_file({"x": x, "y": y}, os.path.join(here, "pytorch_mlp_io.safetensors"), {"format": "pt"})
