"""Permission levels and the approval of calls that need a human's yes.

Names are imported on first use: `permissions.levels`, which nearly everything imports,
does not bring the approval prompts (rich) with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun._lazy import exports

if TYPE_CHECKING:
    from toolrun.permissions.approvals import (
        ApprovalRequest,
        Approver,
        AutoApprover,
        Decision,
        DenyApprover,
        TtyApprover,
        default_approver,
    )
    from toolrun.permissions.levels import PermissionLevel

_APPROVALS = "toolrun.permissions.approvals"
_HOMES = {
    "ApprovalRequest": _APPROVALS,
    "Approver": _APPROVALS,
    "AutoApprover": _APPROVALS,
    "Decision": _APPROVALS,
    "DenyApprover": _APPROVALS,
    "TtyApprover": _APPROVALS,
    "default_approver": _APPROVALS,
    "PermissionLevel": "toolrun.permissions.levels",
}

__all__ = [
    "ApprovalRequest",
    "Approver",
    "AutoApprover",
    "Decision",
    "DenyApprover",
    "PermissionLevel",
    "TtyApprover",
    "default_approver",
]


__getattr__ = exports(__name__, _HOMES)
