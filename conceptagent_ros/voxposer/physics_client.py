"""A PyBullet physics server of one object's own: connected with pybullet_data on the search path,
and closed once, safely, however the object ends (the tabletop world, the arm's kinematics model)."""
from __future__ import annotations

from typing import Any, TypeVar

Client = TypeVar("Client", bound="PhysicsClient")


class PhysicsClient:
    p: Any  # the pybullet module
    client: int  # this object's physics server

    def connect(self, gui: bool = False) -> Any:
        """Connect (DIRECT, or GUI) and return the pybullet module."""
        import pybullet as p
        import pybullet_data

        self.p = p
        self.client = p.connect(p.GUI if gui else p.DIRECT)
        p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=self.client)
        return p

    def close(self) -> None:
        try:
            self.p.disconnect(physicsClientId=self.client)
        except Exception:  # already gone  # noqa: BLE001 - pybullet raises its own error type
            pass

    def __enter__(self: Client) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
