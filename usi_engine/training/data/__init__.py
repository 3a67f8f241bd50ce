"""Training data: positions from self-play (`gensfen`, `selfplay`), labelled by our search or
another USI engine (`labeler`, `rescore`), stored as YaneuraOu's PackedSfenValue (`psv`),
locally or as Ray tasks (`ray_gen`). Needs cshogi; no PyTorch.
"""
