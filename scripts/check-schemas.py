#!/usr/bin/env python3
"""Checks schemas/examples against the JSON Schemas: every valid example must
pass, every invalid one must fail. Run by `make test` (uses the jsonschema
package when present; says so and fails when it is not)."""
import glob, json, os, sys

root = os.path.join(os.path.dirname(__file__), "..", "schemas")
try:
    import jsonschema
except ImportError:
    print("check-schemas: python3 jsonschema missing (pip install jsonschema)", file=sys.stderr)
    sys.exit(1)

failures = 0
schema = json.load(open(os.path.join(root, "notification.schema.json")))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
checked = 0
for path in sorted(glob.glob(os.path.join(root, "examples", "valid", "*.json"))):
    errors = list(validator.iter_errors(json.load(open(path))))
    checked += 1
    if errors:
        failures += 1
        print(f"FAIL {path}: {errors[0].message}")
# rejected/: valid by the schema, refused by a cross-field rule or a size limit in PushCore.
for path in sorted(glob.glob(os.path.join(root, "examples", "rejected", "*.json"))):
    if path.endswith("expected.json"):
        continue
    errors = list(validator.iter_errors(json.load(open(path))))
    checked += 1
    if errors:
        failures += 1
        print(f"FAIL {path}: {errors[0].message}")
for path in sorted(glob.glob(os.path.join(root, "examples", "invalid", "*.json"))):
    if path.endswith("expected.json"):
        continue
    checked += 1
    try:
        doc = json.load(open(path))
    except json.JSONDecodeError:
        continue  # undecodable is invalid by definition
    if not list(validator.iter_errors(doc)):
        failures += 1
        print(f"FAIL {path}: passes the schema but is meant to be invalid")
# Device receipts and device registrations: each schema against its
# examples/<kind>/{valid,invalid}.
for schema_file, kind in (("receipt.schema.json", "receipts"), ("device.schema.json", "devices")):
    schema = json.load(open(os.path.join(root, schema_file)))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    for path in sorted(glob.glob(os.path.join(root, "examples", kind, "valid", "*.json"))):
        errors = list(validator.iter_errors(json.load(open(path))))
        checked += 1
        if errors:
            failures += 1
            print(f"FAIL {path}: {errors[0].message}")
    for path in sorted(glob.glob(os.path.join(root, "examples", kind, "invalid", "*.json"))):
        checked += 1
        try:
            doc = json.load(open(path))
        except json.JSONDecodeError:
            continue
        if not list(validator.iter_errors(doc)):
            failures += 1
            print(f"FAIL {path}: passes {schema_file} but is meant to be invalid")
print(f"schema examples: {checked - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
