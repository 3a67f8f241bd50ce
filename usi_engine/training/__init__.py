"""Training our own NNUE evaluation: self-play data generation (`gensfen`), YaneuraOu's
PackedSfenValue files, feature batches, the PyTorch model, and the export to `nn.bin`.

Nothing here is imported by the engine: the package needs the `train` extra
(torch, cshogi, tqdm, matplotlib), see docs/training.md.
"""
