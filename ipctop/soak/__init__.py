"""The leak soak (`python -m ipctop.soak`): leak_soak.py cycles pairs and counts leaks,
soak_cases.py the cases that need processes of their own."""
