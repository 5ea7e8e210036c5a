"""DataWorks EventBridge CloudEvents and Function Compute messages."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from datetime import datetime, timezone

from pipelines.synthetic.common import CST, TABLES, Bag, dumps, random_uuid, weighted

# DataWorks ------------------------------------------------------------------------------

DW_TENANT = 283789910656
DW_PROJECTS = (91234, 307303, 256663)
DW_OPERATORS = ("1904567812345735", "1504650005316516", "1107550004253538")
DW_STATUS_PATHS = ((1, 2, 3, 4, 6), (2, 4, 6), (1, 3, 4, 5), (4, 5), (2, 3, 4, 6))


def _cst(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, CST).isoformat(timespec="milliseconds")


def _utc_z(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _kebab(name: str) -> str:
    return "".join("-" + c.lower() if c.isupper() else c for c in name).lstrip("-")


class DataWorksWorld:
    """Nodes, files and task instances; instance status walks a plausible path and finishes.
    Permission requests are opened and, later, approved, rejected or finished without an outcome."""

    def __init__(
        self, rng: random.Random, clock: Callable[[], int], fc_budget: int, first_serial: int = 0
    ) -> None:
        """`first_serial`: where the instance and workflow ids of this batch start, so that a later
        batch of the same feed continues DataWorks' id sequence instead of reusing its ids."""
        self.rng, self.clock, self.fc_budget = rng, clock, fc_budget
        self.instances = Bag()  # (taskId, nodeId, dagId, path, step)
        self.nodes = Bag()
        self.serial = first_serial
        self.pick_action = weighted(
            rng,
            [
                (self._instance_status, 45),
                (self._node_change, 9),
                (self._file_change, 10),
                (self._instance_operation, 5),
                (self._dag_status, 5),
                (self._alert, 4),
                (self._dqc_finished, 6),
                (self._dq_rule, 3),
                (self._backfill, 1),
                (self._approval, 2),
            ],
        )
        self.approvals = Bag()  # open permission requests: (process id, created at, applicant, table)

    def records(self) -> Iterator[tuple[str, str | None]]:
        """(envelope line, FC message text or None) pairs in event-time order."""
        while True:
            yield self.pick_action()()

    def _pick(self, items: tuple):
        return items[int(self.rng.random() * len(items))]

    def _envelope(self, category: str, action: str, time: int, data: dict) -> str:
        rng = self.rng
        data["eventCode"] = data.get("eventCode") or _kebab(action)
        return dumps(
            {
                "datacontenttype": "application/json;charset=utf-8",
                "data": data,
                "id": random_uuid(rng),
                "source": "acs.dataworks",
                "specversion": "1.0",
                "subject": "",
                "time": _cst(time),
                "type": f"dataworks:{category}:{action}",
                "aliyunaccountid": "1493189603770213",
                "aliyunpublishtime": _utc_z(time + 50 + int(rng.random() * 900)),
                "aliyuneventbusname": "default",
                "aliyunregionid": "cn-hangzhou",
            }
        )

    def _base(self) -> dict:
        return {
            "tenantId": DW_TENANT,
            "projectId": self._pick(DW_PROJECTS),
            "operator": self._pick(DW_OPERATORS),
        }

    def _node_id(self) -> int:
        if not self.nodes or self.rng.random() < 0.1:
            self.serial += 1
            self.nodes.add(700_000_000 + self.serial)
        return self.nodes.pick(self.rng)

    def _instance_status(self) -> tuple[str, None]:
        rng, time = self.rng, self.clock()
        if not self.instances or rng.random() < 0.25:
            self.serial += 1
            path = self._pick(DW_STATUS_PATHS)
            instance = (
                453_000_000_000 + self.serial,
                self._node_id(),
                446_000_000 + self.serial // 20,
                path,
                0,
            )
        else:
            instance = self.instances.pick(rng)
            self.instances.discard(instance)
            instance = instance[:4] + (instance[4] + 1,)
        task_id, node_id, dag_id, path, step = instance
        if step + 1 < len(path):
            self.instances.add(instance)
        data = {
            "beginWaitTimeTime": time - 2000,
            "dagId": dag_id,
            "dagType": 0,
            "eventCode": "instance-status-changes",
            "taskType": 0,
            "modifyTime": time,
            "createTime": time - 86_400_000,
            "appId": self._pick(DW_PROJECTS),
            "tenantId": DW_TENANT,
            "opCode": 31,
            "flowId": 1,
            "nodeId": node_id,
            "taskId": task_id,
            "status": path[step],
        }
        if path[step] in (5, 6):
            data["finishTime"] = time
        return self._envelope("InstanceStatusChanges", "InstanceStatusChanges", time, data), None

    def _node_change(self) -> tuple[str, None]:
        time, node_id = self.clock(), self._node_id()
        action = self._pick(
            ("NodeChangeCreated", "NodeChangeUpdated", "NodeChangeUpdated", "NodeChangeDeleted")
        )
        data = {
            "nodeName": f"ods_{self._pick(TABLES)}_{node_id % 1000}",
            "programType": self._pick(("ODPS_SQL", "DI", "PYODPS3", "SHELL")),
            "cronExpress": "00 04 00 * * ?",
            "blockBusiness": False,
            "schedulerType": "NORMAL",
            "ownerId": self._pick(DW_OPERATORS),
            "priority": self._pick((1, 3, 5, 7, 8)),
            "repeatability": True,
            "modifyTime": time,
            "createTime": time - 3_600_000,
            "nodeId": node_id,
            **self._base(),
        }
        if action == "NodeChangeDeleted":
            self.nodes.discard(node_id)
        return self._envelope("NodeChange", action, time, data), None

    def _file_change(self) -> tuple[str, None]:
        time = self.clock()
        action = self._pick(("CommitFile", "DeployFile", "RunFile", "DeleteFile"))
        data = {
            "fileName": f"ods_{self._pick(TABLES)}",
            "extensionBizId": f"{self.rng.getrandbits(48):012x}",
            "changeType": self._pick(("0", "1", "1")),
            "blockBusiness": False,
            "fileCreateTime": _cst(time - 86_400_000)[:19].replace("T", " "),
            "fileOwner": self._pick(DW_OPERATORS),
            "fileVersion": 1 + int(self.rng.random() * 9),
            "fileType": 10,
            "fileId": 500_000_000 + int(self.rng.random() * 1_000_000),
            "nodeId": self._node_id(),
            **self._base(),
        }
        return self._envelope("FileChange", action, time, data), None

    def _instance_operation(self) -> tuple[str, None]:
        time = self.clock()
        action = self._pick(
            ("FreezeInstance", "UnfreezeInstance", "KillInstance", "RerunInstance", "SetInstanceSuccess")
        )
        data = {
            "projectType": "PROD",
            "taskIds": [523_000_000_000 + int(self.rng.random() * 1e9)],
            **self._base(),
        }
        return self._envelope("InstanceChange", action, time, data), None

    def _dag_status(self) -> tuple[str, None]:
        time = self.clock()
        day = _cst(time - 86_400_000)[:10]
        data = {
            "bizDate": f"{day} 00:00:00",
            "createTime": _cst(time)[:19].replace("T", " "),
            "dagId": 500_000_000_000 + int(self.rng.random() * 1e9),
            "dagName": f"P_backfill_{day.replace('-', '')}",
            "dagType": self._pick((0, 1, 3, 5)),
            "flowId": 1,
            "flowName": "ATCLOUD_FLOW",
            "projectEnv": "PROD",
            "status": self._pick((1, 4, 5, 6, 6)),
            **self._base(),
        }
        return self._envelope("DagStatusChanges", "DagStatusChanges", time, data), None

    def _alert(self) -> tuple[str, None]:
        time = self.clock()
        data = {
            "alarmType": "SLA_ALERT",
            "baselineId": 137_000_723,
            "baselineName": "ods hourly baseline",
            "baselineStatus": self._pick((-1, 1, 2, 3)),
            "bizDate": time - time % 86_400_000,
            "inGroupId": 1 + int(self.rng.random() * 24),
            "nodeId": self._node_id(),
            "taskId": 307_000_000_000 + int(self.rng.random() * 1e9),
            **self._base(),
        }
        return self._envelope("MonitorAlert", "WorkbenchMonitorAlert", time, data), None

    def _dqc_finished(self) -> tuple[str, None]:
        time = self.clock()
        stamp = _cst(time)[:19].replace("T", " ")
        data = {
            "id": 521_000_000 + int(self.rng.random() * 1e6),
            "taskId": f"{self.rng.getrandbits(64):016x}",
            "ruleId": 28_610_334 + int(self.rng.random() * 100),
            "property": "-",
            "bizdate": f"{_cst(time - 86_400_000)[:10]} 00:00:00",
            "dateType": "YMD",
            "blockType": self._pick((0, 1)),
            "checkResult": self._pick((-2, -1, 0, 0, 0, 1, 2)),
            "eventCode": "dqc-check-finished-event",
            "methodName": "table_count",
            "beginTime": stamp,
            "endTime": stamp,
            "projectName": "test_mc_project",
            "tableName": f"ods_{self._pick(TABLES)}",
            "ruleName": "row count above zero",
            **self._base(),
        }
        return self._envelope("DqcCheck", "DqcCheckFinishedEvent", time, data), None

    def _dq_rule(self) -> tuple[str, str | None]:
        """Data-quality rule pre-events carry operationTime, so they can travel as FC messages."""
        time, rng = self.clock(), self.rng
        action = self._pick(
            ("BatchCreateDataQualityRules", "UpdateDataQualityRule", "BatchDeleteDataQualityRules")
        )
        data = {"eventCode": _kebab(action), **self._base(), "operationTime": time}
        if action == "BatchDeleteDataQualityRules":
            data["ids"] = [100_000 + int(rng.random() * 1000)]
        else:
            data.update({"id": 100_001, "name": "row count above zero", "enabled": True, "severity": "High"})
        line = self._envelope("DqcCheck", action, time, data)
        fc = None
        if self.fc_budget > 0 and rng.random() < 0.5:
            self.fc_budget -= 1
            fc = dumps(
                {
                    "blockBusiness": True,
                    "eventCategoryType": "dqc-check",
                    "eventType": data["eventCode"],
                    "extensionBizId": f"job_{rng.getrandbits(40):010x}",
                    "messageBody": data,
                    "messageId": random_uuid(rng),
                }
            )
        return line, fc

    def _backfill(self) -> tuple[str, None]:
        time = self.clock()
        root = self._node_id()
        day = _cst(time)[:10]
        data = {
            "excludeNodeIds": [],
            "rootNodeId": root,
            "startFutureInstanceImmediately": False,
            "useMultipleTimePeriods": False,
            "parallelGroup": 1,
            "rootNodeProjectId": DW_PROJECTS[0],
            "isParallel": False,
            "name": f"P_{day.replace('-', '')}_{root % 10000}",
            "includeNodeIds": [root],
            "order": "asc",
            "extensionBizId": f"{self.rng.getrandbits(40):010x}",
            **self._base(),
        }
        return self._envelope("BackfillDataOperate", "BackfillData", time, data), None

    def _approval(self) -> tuple[str, None]:
        """A permission request for a MaxCompute table: created, or an open one finished."""
        rng, time = self.rng, self.clock()
        if self.approvals and rng.random() < 0.5:
            picked = self.approvals.pick(rng)
            self.approvals.discard(picked)
            process_id, created, applicant, table = picked
            action, status = "ApprovalChangeFinished", self._pick(("Approved", "Rejected", None))
        else:
            self.serial += 1
            process_id, created = str(528_535_000_000_000 + self.serial), time
            applicant, table = self._pick(DW_OPERATORS), f"ods_{self._pick(TABLES)}"
            self.approvals.add((process_id, created, applicant, table))
            action, status = "ApprovalChangeCreated", "Submit"
        approver = self._pick(("dataworks.admin", "security.officer"))
        data = {
            "appId": DW_PROJECTS[0],
            "assignee": approver,
            "assigneeName": approver,
            "createTime": created,
            "eventType": "approval",
            "processId": process_id,
            "taskId": str(int(process_id) + 1),
            "tenantId": DW_TENANT,
            "updateTime": time,
            "process": {
                "applicant": applicant,
                "applicantName": f"user_{applicant[-4:]}",
                "assignmentCategory": "MaxCompute",
                "createTime": created,
                "processDefinitionId": "definition-3dcc9ce7-d29d-435d-a908-60d4355ff5e2",
                "processId": process_id,
                "status": "Pending",
                "title": "MaxComputeTable",
                "updateTime": time,
                "approvalContent": {
                    "applyReason": "analysis",
                    "arrayData": [
                        {
                            "objectType": "TABLE",
                            "objectGuid": f"odps.b_mc1.{table}",
                            "objectName": table,
                            "odpsTable": table,
                            "projectGuid": "odps.b_mc1",
                            "actions": ["Select", "Describe"],
                        }
                    ],
                },
            },
        }
        if status is not None:
            data["status"] = status
        return self._envelope("ApprovalChange", action, time, data), None
