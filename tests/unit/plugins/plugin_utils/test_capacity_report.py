"""capacity_html: the page parsed back: its tables, its bars, no script, every name escaped."""

from html.parser import HTMLParser

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.filter.capacity import FilterModule
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import capacity_plan, capacity_table
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity_report import BAR_WIDTH, MAX_BARS, capacity_html
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import flavor_fit
from tests.unit.plugins.plugin_utils.test_flavor_fit import ALIASES, cpu_host, flavor, gpu_host


class Page(HTMLParser):
    """Tables as lists of rows (cell texts), rects as attribute dicts, every tag seen."""

    def __init__(self, text: str):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.rects: list[dict] = []
        self.tags: set[str] = set()
        self.links: list[str] = []
        self._table = self._row = self._cell = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.add(tag)
        self.links += [v for k, v in attrs.items() if k in ("src", "href") and v]
        if tag == "table":
            self._table = self.tables.setdefault(attrs.get("id"), [])
        elif tag == "tr" and self._table is not None:
            self._row = []
            self._table.append(self._row)
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ""
        elif tag == "rect":
            self.rects.append(attrs)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


FLEET = {"resource_providers": gpu_host(1) + gpu_host(2, used_gpus=1) + cpu_host(1)}


def test_the_validate_page_shows_each_flavor_and_the_fleets_devices():
    flavors = [flavor("gpu", **{"pci_passthrough:alias": "h100:1"}), flavor("typo", **{"trait:CUSTOM_GPU_NVLNK": "x"})]
    reports = flavor_fit(flavors, FLEET, pci_aliases=ALIASES, pci_in_placement=True)
    page = Page(capacity_html(FLEET, flavors=reports, title="validate"))
    assert "script" not in page.tags and page.links == []
    rows = page.tables["flavors"]
    assert rows[0] == ["flavor", "outcome", "hosts after filters", "instances", "why not"]
    assert rows[1][:4] == ["gpu", "fits", "2", "3"]
    assert rows[2][0] == "typo" and rows[2][1] == "invalid_flavor"
    # one bar per host and accelerator class: gpu2 has 1 of 2 used, nothing stranded without a plan
    used = [r for r in page.rects if r["class"] == "used"]
    free = [r for r in page.rects if r["class"] == "free"]
    assert len(used) == len(free) == 2
    assert float(used[1]["width"]) == BAR_WIDTH / 2 and float(free[0]["width"]) == BAR_WIDTH
    assert "plan" not in page.tables


def test_the_capacity_page_shows_the_plan_and_stranded_devices():
    fleet = {"resource_providers": gpu_host(1)}
    demand = [
        {"flavor": flavor("small", vcpus=2, ram=16384), "count": 4},
        {"flavor": flavor("gpu", vcpus=8, ram=32768, **{"pci_passthrough:alias": "h100:1"}), "count": 1},
    ]
    plan = capacity_plan(demand, fleet, pci_aliases=ALIASES, pci_in_placement=True, failures=1)
    page = Page(capacity_html(fleet, plan=plan))
    assert page.tables["plan"][1:] == [["small", "4", "0", ""], ["gpu", "0", "1", page.tables["plan"][2][3]]]
    stranded = [r for r in page.rects if r["class"] == "stranded"]
    assert len(stranded) == 1 and float(stranded[0]["width"]) == BAR_WIDTH  # both GPUs stranded


def test_hostile_names_are_escaped():
    name = '<script>alert(1)</script>"'
    reports = flavor_fit([flavor(name)], FLEET, pci_aliases=ALIASES)
    text = capacity_html(FLEET, flavors=reports)
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert Page(text).tables["flavors"][1][0] == name


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("fleet",), "fleet is not a fleet snapshot"),
        ((FLEET, "flavors"), "flavors must be a flavor_fit report"),
        ((FLEET, [{"name": "x"}]), "flavors[0] is not a flavor_fit report"),
        ((FLEET, None, {"placed": {}}), "plan is not what"),
        ((FLEET, None, "plan"), "plan must be a dict"),
    ],
)
def test_bad_input_is_refused_through_the_filter(args, words):
    with pytest.raises(AnsibleFilterError, match="capacity_html") as caught:
        FilterModule().filters()["capacity_html"](*args)
    assert words in str(caught.value)


def test_a_large_fleet_draws_at_most_max_bars_and_says_how_many_more():
    fleet = {"resource_providers": [p for n in range(MAX_BARS + 3) for p in gpu_host(n)]}
    text = capacity_html(fleet)
    page = Page(text)
    assert len([r for r in page.rects if r["class"] == "used"]) == MAX_BARS
    assert "3 more bar(s)" in text


def test_the_page_shows_the_what_if_options_side_by_side_and_the_failure():
    demand = [
        {"flavor": flavor("vgpu", vcpus=8, ram=16384, disk=0, **{"resources:VGPU": "1"}), "count": 40},
        {"flavor": flavor("gpu", **{"pci_passthrough:alias": "h100:1"}), "count": 2},
    ]
    options = [
        {"name": "l40s-4q", "model": "L40S", "count": 1, "mode": "vgpu", "type": "NVIDIA L40S-4Q", "gpus": 2},
        {"name": "h200-mig", "model": "H200", "count": 2, "mode": "mig", "layout": "3g.71gb", "alone": True},
    ]
    plan = capacity_plan(
        demand, FLEET, pci_aliases=ALIASES, pci_in_placement=True, what_if=options, fail_hosts=["gpu1"]
    )
    page = Page(capacity_html(FLEET, plan=plan))
    assert page.tables["what_if"] == [
        ["flavor", "plan", "l40s-4q (1 host(s))", "h200-mig (2 host(s), alone)"],
        ["vgpu", "0", "24 (+24)", "32 (+32)"],
        ["gpu", "2", "2 (+0)", "0 (-2)"],
        ["stranded devices", "", "none", "none"],
    ]
    text = capacity_html(FLEET, plan=plan)
    # gpu2 has one H100 in use already: the one on gpu1 finds no place.
    assert '<p class="failure">losing gpu1: 1 instance(s) placed again, some no longer fit</p>' in text
    assert (
        '<p class="failure">lost 1 of gpu: survivors_full: no surviving host has CUSTOM_NVIDIA_H100 free for one '
        "more instance</p>"
    ) in text
    lines = capacity_table(plan)
    assert "what if h200-mig (2 host(s) alone): placed vgpu: 32 (+32), gpu: 0 (-2); stranded none" in lines
