#!/usr/bin/env python3
"""Prints what schemas/notification.schema.json says about every *.json file
in a directory, one line per file:

    <file name> TAB <verdict> TAB <first error, or ->

verdict: `accept`, `reject` (JSON, but the schema refuses it) or
`unparseable` (not JSON to Python: not UTF-8, a syntax error, NaN/Infinity).
The text is read the way a lenient producer reads it: a UTF-8 byte order
mark is skipped and a repeated key keeps its last value (the worker refuses
both; that is one of its own rules, schemas/README.md).

Each document is validated twice, with and without a FormatChecker; when the
two verdicts differ the verdict is `format-dependent` (the schema's patterns
must decide on their own). Used by the SchemaAgreementTests (PushCoreTests).

Usage: schema-verdicts.py DIR [SCHEMA]   (exit 2 when jsonschema is missing)
"""
import json, os, sys

sys.stdout.reconfigure(errors="backslashreplace")

try:
    import jsonschema
except ImportError:
    print("schema-verdicts: python3 jsonschema missing (pip install jsonschema)", file=sys.stderr)
    sys.exit(2)

here = os.path.dirname(os.path.abspath(__file__))
directory = sys.argv[1]
schema_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "schemas", "notification.schema.json")
schema = json.load(open(schema_path, encoding="utf-8"))
jsonschema.Draft202012Validator.check_schema(schema)
with_formats = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
without_formats = jsonschema.Draft202012Validator(schema)


def refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


def first_error(validator, doc):
    error = next(iter(sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "$"
    return f"{where}: {error.message}"


def one_line(text):
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")[:300]


for name in sorted(os.listdir(directory)):
    if not name.endswith(".json"):
        continue
    raw = open(os.path.join(directory, name), "rb").read()
    try:
        doc = json.loads(raw.decode("utf-8-sig"), parse_constant=refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        print(f"{name}\tunparseable\t{one_line(str(error))}")
        continue
    formatted = first_error(with_formats, doc)
    plain = first_error(without_formats, doc)
    if (formatted is None) != (plain is None):
        print(f"{name}\tformat-dependent\t{one_line(formatted or plain)}")
    elif formatted is None:
        print(f"{name}\taccept\t-")
    else:
        print(f"{name}\treject\t{one_line(formatted)}")
