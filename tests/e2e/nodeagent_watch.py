"""The node agent's watch: list + watch of one resource (Pods, Services) into a store, the way an
informer does (bookmarks, re-list on 410 Gone), waking the agent's control loop on every change.
"""
from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING

from .nodeagent_objects import pod_key

if TYPE_CHECKING:
    from .nodeagent import NodeAgent


class Informer(threading.Thread):
    """list + watch one resource (all namespaces) into ``store``; re-lists on 410 Gone."""

    def __init__(self, agent: "NodeAgent", kind: str, list_fn_name: str):
        super().__init__(name=f"nodeagent-{kind}", daemon=True)
        self.agent, self.kind, self.list_fn_name = agent, kind, list_fn_name
        self.store: dict[tuple[str, str], dict] = {}
        self.synced = threading.Event()
        self.relists = 0

    def run(self) -> None:
        from kubernetes import client, watch
        from kubernetes.client.rest import ApiException

        api = self.agent.new_client()
        list_fn = getattr(client.CoreV1Api(api), self.list_fn_name)
        rv = None
        while not self.agent.stopping.is_set():
            try:
                if rv is None:
                    resp = list_fn(_preload_content=False, _request_timeout=60)
                    body = json.loads(resp.data)
                    self.relists += 1
                    items = {pod_key(o): o for o in body["items"]}
                    with self.agent.lock:
                        gone = [self.store[k] for k in self.store if k not in items]
                        self.store.clear()
                        self.store.update(items)
                    for o in gone:
                        self.agent.on_deleted(self.kind, o)
                    rv = body["metadata"]["resourceVersion"]
                    self.synced.set()
                    self.agent.kick()
                w = watch.Watch()
                for ev in w.stream(list_fn, resource_version=rv, allow_watch_bookmarks=True, timeout_seconds=30,
                                   deserialize=False, _request_timeout=60):
                    obj = ev["object"]
                    rv = obj["metadata"].get("resourceVersion", rv)
                    if ev["type"] == "BOOKMARK":
                        continue
                    with self.agent.lock:
                        if ev["type"] == "DELETED":
                            self.store.pop(pod_key(obj), None)
                        else:
                            self.store[pod_key(obj)] = obj
                    if ev["type"] == "DELETED":
                        self.agent.on_deleted(self.kind, obj)
                    self.agent.kick()
                    if self.agent.stopping.is_set():
                        w.stop()
            except ApiException as e:
                if e.status == 410:
                    rv = None  # too old: list again
                    continue
                self.agent.note(f"{self.kind} watch: {e.status} {e.reason}")
                time.sleep(0.5)
            except Exception as e:  # noqa: BLE001 - connection reset, server stopping: retry
                if self.agent.stopping.is_set():
                    return
                self.agent.note(f"{self.kind} watch: {type(e).__name__}: {e}")
                time.sleep(0.5)
