"""The app's retrieval stage: a router's support articles in Qdrant, in local mode
(``QdrantClient(":memory:")``: no server). The collection uses Euclidean distance, so a
point's ``score`` is a distance: lower is better (ci-eval.toml: ``score = "distance"``).
The chunk id is in each point's payload (``id_from = "metadata.chunk_id"``): Qdrant point
ids must be integers or UUIDs. The embedding is a deterministic stand-in (hashed words,
unit length) so the example runs offline."""

from __future__ import annotations

import math
import re
import zlib

from qdrant_client import QdrantClient, models

ARTICLES = [
    ("setup/first-boot", "On first boot, join the router's setup network and open the admin page."),
    ("setup/admin-password", "Change the admin password under System, Administration right after setup."),
    ("wifi/channels", "If the wifi is slow, pick a less crowded channel under Wireless, Channel."),
    ("wifi/guest", "A guest network keeps visitors away from your own devices; turn it on under Wireless."),
    ("firmware/update", "Update the firmware from System, Firmware; the router restarts when it is done."),
    ("firmware/rollback", "If an update fails, hold reset for ten seconds to boot the previous firmware."),
    ("ports/forwarding", "Forward a port to a device under Network, Port forwarding, with its fixed address."),
    ("vpn/server", "The built-in VPN server needs a dynamic DNS name so you can reach home from outside."),
]
DIM = 96
COLLECTION = "router-kb"


def embed(text: str) -> list[float]:
    vector = [0.0] * DIM
    for word in re.findall(r"[a-z]+", text.lower()):
        vector[zlib.crc32(word.encode()) % DIM] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def _client() -> QdrantClient:
    client = QdrantClient(":memory:")
    client.create_collection(COLLECTION, vectors_config=models.VectorParams(size=DIM, distance=models.Distance.EUCLID))
    client.upsert(COLLECTION, points=[models.PointStruct(id=n, vector=embed(text), payload={"chunk_id": cid})
                                      for n, (cid, text) in enumerate(ARTICLES)])
    return client


CLIENT = _client()


def search(question: str, k: int):
    """The app's search: Qdrant's scored points, nearest first, as they come."""
    return CLIENT.query_points(COLLECTION, query=embed(question), limit=k, with_payload=True).points


def manifest() -> dict:
    """Every chunk id in the collection, so `ci-eval check` finds stale gold ids."""
    points, _ = CLIENT.scroll(COLLECTION, limit=10_000, with_payload=True)
    return {"version": "router-kb-1", "ids": sorted(p.payload["chunk_id"] for p in points)}
