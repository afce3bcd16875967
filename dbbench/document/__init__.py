"""Result documents: the typed model, its validation, reading and writing files (store), and baselines."""
