"""The lisa_srl component, its decoding and its scorer."""
