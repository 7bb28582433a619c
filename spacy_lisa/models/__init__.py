"""LISA and label-attention models: plain torch modules plus their Thinc builders."""
