"""The dataset: its definition, the rows generated from it, the load files cached on disk, and the seed that loads and verifies them."""
