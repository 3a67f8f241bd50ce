"""Learning from the data: feature batches (`dataset`), the PyTorch model (`model`), the
training loop (`trainer`) and the export to `nn.bin` (`export`). Needs PyTorch.
"""
