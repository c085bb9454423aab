"""Write the published JSON Schema of records: `python -m ipctop.output.record_schema`.

The schema is generated from the models in record.py; the copy kept in
ipctop/schema/ is what other tools read, and tests/test_record_schema.py
fails when the two drift apart.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ipctop.output.record import json_schema

PUBLISHED = Path(__file__).resolve().parent.parent / "schema" / "record.schema.json"


def schema_text() -> str:
    return json.dumps(json_schema(), indent=1, sort_keys=True) + "\n"


def main() -> int:
    PUBLISHED.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {PUBLISHED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
