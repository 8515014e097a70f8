"""What users and ansible-builder read from the collection root: requirements, EE metadata, versions."""

import ast
import os
import re
import sys

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load(path):
    with open(os.path.join(REPO, path)) as handle:
        return yaml.safe_load(handle)


def requirement_names(path):
    with open(os.path.join(REPO, path)) as handle:
        lines = [line.split("#")[0].strip() for line in handle]
    return {re.split(r"[<>=!~\[ ]", line)[0].lower() for line in lines if line}


def test_execution_environment_names_files_that_exist():
    ee = load("meta/execution-environment.yml")
    assert ee["version"] == 1
    for kind in ("python", "system"):
        assert os.path.isfile(os.path.join(REPO, ee["dependencies"][kind])), kind


def test_requirements_name_every_third_party_library_the_plugins_import():
    imported = set()
    for directory, _dirs, files in os.walk(os.path.join(REPO, "plugins")):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(directory, name)) as handle:
                    tree = ast.parse(handle.read())
                for node in ast.walk(tree):
                    if isinstance(node, ast.Import):
                        imported.update(alias.name.split(".")[0] for alias in node.names)
                    elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                        imported.add(node.module.split(".")[0])
    third_party = {
        name
        for name in imported
        # ansible-core brings Jinja2 and PyYAML with it
        if name not in ("ansible", "ansible_collections", "__future__", "jinja2", "yaml")
        and name not in sys.stdlib_module_names
    }
    assert third_party == {"openstack", "keystoneauth1", "jmespath", "netaddr"}
    # keystoneauth1 comes with openstacksdk
    assert requirement_names("requirements.txt") == {"openstacksdk", "jmespath", "netaddr"}


def test_build_ignore_leaves_out_tests_benchmarks_and_tool_configs():
    ignored = set(load("galaxy.yml")["build_ignore"])
    assert {"tests", "benchmarks", "molecule", "Makefile", "pyproject.toml", ".ansible-lint", "requirements"} <= ignored
    assert not ignored & {"docs", "requirements.txt", "bindep.txt", "meta", "playbooks", "roles", "plugins"}


def test_galaxy_yml_holds_only_keys_of_ansible_galaxys_schema_and_no_placeholder_url():
    from ansible.galaxy import collection

    schema = os.path.join(os.path.dirname(collection.__file__), "..", "data", "collections_galaxy_meta.yml")
    with open(schema) as handle:
        known = {entry["key"] for entry in yaml.safe_load(handle)}
    galaxy = load("galaxy.yml")
    assert set(galaxy) <= known, set(galaxy) - known
    urls = {key: galaxy[key] for key in ("repository", "homepage", "documentation", "issues") if key in galaxy}
    assert urls == {}, "the collection has no public home: galaxy.yml names no URL (docs/decisions.md)"
    with open(os.path.join(REPO, "galaxy.yml")) as handle:
        assert ".invalid" not in handle.read()


def test_every_version_added_names_the_collections_version():
    version = load("galaxy.yml")["version"]
    found = []
    for directory, _dirs, files in os.walk(os.path.join(REPO, "plugins")):
        for name in files:
            if name.endswith((".py", ".yml")):
                with open(os.path.join(directory, name)) as handle:
                    found += [(name, v) for v in re.findall(r"version_added:\s*['\"]?([\w.]+)", handle.read())]
    assert found
    assert [item for item in found if item[1] != version] == []


def test_the_changelog_releases_the_collections_version():
    version = load("galaxy.yml")["version"]
    assert str(version) in load("changelogs/changelog.yaml")["releases"]


def test_site_yml_at_the_root_runs_the_shipped_playbook():
    assert load("site.yml") == [{"name": "The whole pipeline", "ansible.builtin.import_playbook": "playbooks/site.yml"}]
    plays = load("playbooks/site.yml")
    stages = [play["ansible.builtin.import_playbook"] for play in plays]
    assert stages == ["discover.yml", "prepare_hosts.yml", "nova_config.yml", "placement.yml", "validate.yml"]
    assert [play["tags"] for play in plays] == [[stage[: -len(".yml")]] for stage in stages]


def test_no_shipped_doc_points_at_a_file_the_collection_does_not_ship():
    """Docs stand alone: no reference to a design file outside the collection."""
    cited = []
    for directory in ("docs", "."):
        for name in sorted(os.listdir(os.path.join(REPO, directory))):
            if name.endswith(".md"):
                with open(os.path.join(REPO, directory, name)) as handle:
                    if "DESIGN" in handle.read():
                        cited.append(os.path.join(directory, name))
    # docs/placement.md is rewritten with the Placement ownership work, which removes its citation;
    # every other page already stands alone
    assert set(cited) <= {"docs/placement.md"}, cited


def test_the_readme_pipeline_table_lists_every_playbook():
    with open(os.path.join(REPO, "README.md")) as handle:
        readme = handle.read()
    playbooks = sorted(f for f in os.listdir(os.path.join(REPO, "playbooks")) if f.endswith(".yml") and f != "site.yml")
    missing = [f for f in playbooks if f"| `playbooks/{f}` |" not in readme]
    assert not missing, f"README.md's pipeline table does not list {missing}"


def test_the_readme_names_every_module_filter_lookup_and_role():
    with open(os.path.join(REPO, "README.md")) as handle:
        readme = handle.read()
    names = [f[:-3] for f in os.listdir(os.path.join(REPO, "plugins", "modules")) if f.endswith(".py")]
    names += [f[:-3] for f in os.listdir(os.path.join(REPO, "plugins", "lookup")) if f.endswith(".py")]
    names += [f[:-4] for f in os.listdir(os.path.join(REPO, "plugins", "filter")) if f.endswith(".yml")]
    names += os.listdir(os.path.join(REPO, "roles"))
    missing = sorted(name for name in names if f"`{name}`" not in readme)
    assert not missing, f"README.md does not name {missing}"
