"""Drop-in clients shaped like other memory libraries' (``reverie.compat.mem0``)."""
