"""A DataHub Cloud workflow form request (an access request) as its change event generators emit it.

Created (`CREATE`: the workflow, the form's answers as JSON text, the requester, the access's
expiry; no resource named), a step accepted (`MODIFY` with `stepId`, `stepResult`), completed
(`COMPLETED` with `result` and, on newer servers, the requested resource as `entityUrn` with its
type and names). The event's own `entityUrn` is the request's urn.
"""

from __future__ import annotations

FORM_REQUEST = "urn:li:actionRequest:access-1"
FORM_RESOURCE = "urn:li:dataset:(urn:li:dataPlatform:snowflake,example.table,PROD)"
WORKFLOW = "urn:li:actionWorkflow:data-access-request"
FORM_FIELDS = '{"dataset":["' + FORM_RESOURCE + '"],"justification":["a new dashboard"]}'
REQUESTER = "urn:li:corpuser:jdoe"
APPROVER = "urn:li:corpuser:owner"
EXPIRES_AT_MS = 1767225600000
_COMMON = {
    "actionRequestType": "WORKFLOW_FORM_REQUEST",
    "workflowUrn": WORKFLOW,
    "workflowId": "data-access-request",
    "fields": FORM_FIELDS,
    "actorUrn": REQUESTER,
    "actorEmail": "jdoe@example.com",
    "expiresAtMs": str(EXPIRES_AT_MS),
}


def _event(operation: str, parameters: dict, actor: str, time: int) -> dict:
    return {
        "entityType": "actionRequest",
        "entityUrn": FORM_REQUEST,
        "category": "LIFECYCLE",
        "operation": operation,
        "auditStamp": {"actor": actor, "time": time},
        "version": 0,
        "parameters": {**_COMMON, **parameters},
    }


def form_events(times: tuple[int, int, int] = (1767222000000, 1767225600000, 1767240000000)) -> list[dict]:
    """The request's three events at `times` (epoch ms): created, a step accepted, completed."""
    created, step, completed = times
    return [
        _event("CREATE", {}, REQUESTER, created),
        _event("MODIFY", {"stepId": "owner_approval", "stepResult": "ACCEPTED"}, APPROVER, step),
        _event(
            "COMPLETED",
            {
                "operation": "COMPLETE",
                "result": "ACCEPTED",
                "entityUrn": FORM_RESOURCE,
                "entityType": "dataset",
                "entityName": "table",
                "qualifiedEntityName": "example.table",
                "entityPlatformName": "snowflake",
            },
            APPROVER,
            completed,
        ),
    ]
