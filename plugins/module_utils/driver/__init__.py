"""The loops of the shell: observe, call the engine, execute its Steps, repeat."""
