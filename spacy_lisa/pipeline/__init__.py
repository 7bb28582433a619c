"""The lisa_srl component and its scorer."""
