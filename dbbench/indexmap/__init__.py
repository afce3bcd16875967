"""Which index serves which query (``dbbench indexes``): every index of the tables a catalog reads,
hidden in turn, with every shape that reads its table measured again (:mod:`.run`)."""
