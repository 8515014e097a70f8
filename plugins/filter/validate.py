# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filters validate_requests and validation_report; their documentation is in validate_requests.yml and
validation_report.yml beside this file (one sidecar per filter, as ansible-doc reads them)."""

from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import check, filter_errors

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").


@filter_errors
def _validate_requests(requests, fleet, count_limit=64):
    from ansible_collections.accel.openstack.plugins.plugin_utils.validation import (
        ValidationInputError,
        validate_requests,
    )

    requests = list(check("validate_requests", "requests", requests, "list", optional=True) or [])
    fleet = check("validate_requests", "fleet", fleet, "mapping")
    count_limit = check("validate_requests", "count_limit", count_limit, "integer", minimum=1)
    try:
        return validate_requests(fleet, requests, count_limit=count_limit)
    except ValidationInputError as exc:
        raise AnsibleFilterError(str(exc)) from exc


@filter_errors
def _validation_report(results):
    from ansible_collections.accel.openstack.plugins.plugin_utils.validation import validation_report

    return validation_report(list(check("validation_report", "results", results, "list", optional=True) or []))


class FilterModule:
    def filters(self):
        return {"validate_requests": _validate_requests, "validation_report": _validation_report}
