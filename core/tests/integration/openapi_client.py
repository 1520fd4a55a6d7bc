"""Checks the Python client openapi-python-client generated from the document (see
openapi_client.rs, which runs this with the generator's own venv, where httpx and attrs are).

    python openapi_client.py DIR PACKAGE OPENAPI_JSON

DIR holds the generated package PACKAGE. Every module of it must compile and import; every
operation of the document must have its module (`api/<tag>/<operation>.py`) with its four
functions, the three tus ones with their `Tus-Resumable` header; no class may be made of one
operation's error answer (they share a class per error status); and the types the document
gives reach the client: boolean flags, text form parts, the asset type and the error kind.
Prints one line per problem and exits with 1 when there is any.
"""

import compileall
import importlib
import json
import pkgutil
import re
import sys
from pathlib import Path

from openapi_python_client.strings import snake_case

root, package, document = Path(sys.argv[1]), sys.argv[2], json.loads(Path(sys.argv[3]).read_text())
problems = []

if not compileall.compile_dir(root / package, quiet=1):
    problems.append("the generated package does not compile (see above)")

sys.path.insert(0, str(root))
modules = {}
top = importlib.import_module(package)
for info in pkgutil.walk_packages(top.__path__, f"{package}."):
    try:
        modules[info.name] = importlib.import_module(info.name)
    except Exception as error:  # noqa: BLE001 - every failure is a finding
        problems.append(f"{info.name} does not import: {error!r}")

operations = []
for path, item in document["paths"].items():
    for method, operation in item.items():
        operations.append((method.upper(), path, operation))
for method, path, operation in operations:
    name = f"{package}.api.{snake_case(operation['tags'][0])}.{snake_case(operation['operationId'])}"
    module = modules.get(name)
    if module is None:
        problems.append(f"{method} {path} ({operation['operationId']}): no module {name}")
        continue
    for function in ("sync", "sync_detailed", "asyncio", "asyncio_detailed"):
        if not callable(getattr(module, function, None)):
            problems.append(f"{name}: no {function}()")

for operation in ("create_upload", "patch_upload", "delete_upload"):
    module = modules.get(f"{package}.api.uploads.{operation}")
    if module is None:
        problems.append(f"the tus operation {operation} is missing")
    elif "tus_resumable" not in module.sync_detailed.__annotations__:
        problems.append(f"{operation} takes no Tus-Resumable header")

per_answer = sorted(name for name in modules if re.search(r"\.models\..*_response_[45]", name))
if per_answer:
    problems.append(f"classes made of one operation's error answer: {per_answer}")

models = modules.get(f"{package}.models")


def annotation(owner, name):
    """The annotation (a string) of `name` in `owner`, or ''."""
    return str(getattr(owner, "__annotations__", {}).get(name, ""))


def expect(what, text, wanted):
    """A problem unless the annotation `text` names the type `wanted`."""
    if not re.search(rf"\b{wanted}\b", text):
        problems.append(f"{what} is `{text}`, not {wanted}")


if models is None:
    problems.append("no models package")
else:
    api = f"{package}.api"
    for owner, flag in (("libraries.get_library", "include_assets"), ("assets.delete_asset", "force")):
        function = getattr(modules.get(f"{api}.{owner}"), "sync_detailed", None)
        expect(f"{owner}({flag})", annotation(function, flag), "bool")
    form = getattr(models, "UploadForm", None)
    for part in ("title", "description", "tags"):
        expect(f"UploadForm.{part}", annotation(form, part), "str")
    expect("UploadForm.file", annotation(form, "file"), "File")
    expect("UploadForm.asset_type", annotation(form, "asset_type"), "AssetType")
    for schema in ("ImageAsset", "LibraryAsset", "NewAsset"):
        expect(f"{schema}.asset_type", annotation(getattr(models, schema, None), "asset_type"), "AssetType")
    for schema in ("Error", "NotFoundError", "ValidationError", "ConflictError"):
        expect(f"{schema}.error", annotation(getattr(models, schema, None), "error"), "ErrorKind")
    kinds = [kind.value for kind in getattr(models, "ErrorKind", [])]
    if "Not found" not in kinds:
        problems.append(f"ErrorKind is {kinds}")
    expect("DirectUploadDocument.on_duplicate",
           annotation(getattr(models, "DirectUploadDocument", None), "on_duplicate"), "OnDuplicate")

for problem in problems:
    print(problem)
print(f"{len(operations)} operations, {len(modules)} modules, {len(problems)} problems")
sys.exit(1 if problems else 0)
