"""A JSON Schema check for the keywords the tool schemas use (standard library only).

Covers type (one or a list), enum, minimum, properties, required,
additionalProperties (false or a schema), items, anyOf, oneOf and local $ref
(#/$defs/NAME). An
unknown keyword is itself a problem, so a schema cannot quietly rely on
something this check ignores.
"""

KNOWN = {"type", "enum", "minimum", "properties", "required", "additionalProperties", "items", "anyOf", "oneOf", "$ref", "$defs",
         "description", "default", "title"}
_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is_type(value, kind):
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[kind])


def _resolve(ref, root):
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref is supported, not {ref}")
    node = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def schema_errors(instance, schema, where="$", root=None):
    """Every problem of `instance` against `schema`, as readable strings (empty: valid)."""
    root = schema if root is None else root
    unknown = set(schema) - KNOWN
    if unknown:
        return [f"{where}: schema uses unsupported keyword(s) {sorted(unknown)}"]
    if "$ref" in schema:
        return schema_errors(instance, _resolve(schema["$ref"], root), where, root)
    out = []
    wanted = schema.get("type")
    if wanted is not None:
        kinds = wanted if isinstance(wanted, list) else [wanted]
        if not any(_is_type(instance, k) for k in kinds):
            return [f"{where}: expected {wanted}, got {type(instance).__name__}"]
    if "enum" in schema and instance not in schema["enum"]:
        out.append(f"{where}: {instance!r} not in {schema['enum']}")
    if "minimum" in schema and _is_type(instance, "number") and instance < schema["minimum"]:
        out.append(f"{where}: {instance!r} is below the minimum {schema['minimum']}")
    for keyword, need in (("anyOf", "any"), ("oneOf", "one")):
        if keyword in schema:
            passing = sum(1 for sub in schema[keyword] if not schema_errors(instance, sub, where, root))
            if passing == 0 or (need == "one" and passing != 1):
                out.append(f"{where}: matches {passing} of the {keyword} alternatives")
    if isinstance(instance, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in instance:
                out.append(f"{where}: missing required {name!r}")
        extra = schema.get("additionalProperties", True)
        for name, value in instance.items():
            if name in props:
                out += schema_errors(value, props[name], f"{where}.{name}", root)
            elif extra is False:
                out.append(f"{where}: unexpected property {name!r}")
            elif isinstance(extra, dict):
                out += schema_errors(value, extra, f"{where}.{name}", root)
    if isinstance(instance, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(instance):
            out += schema_errors(item, schema["items"], f"{where}[{i}]", root)
    return out


def bare_fields(schema, where="$"):
    """Places where a schema says nothing: an object without properties at the root, a property without a type."""
    out = []
    if where == "$" and not schema.get("properties"):
        out.append("$: no properties")
    for name, sub in (schema.get("properties") or {}).items():
        if not any(k in sub for k in ("type", "anyOf", "oneOf", "$ref")):
            out.append(f"{where}.{name}: no type")
    return out
