"""DVPP (``acl.media``): DVPP memory, picture/stream descriptors and configs, JPEG/PNG codecs and VPC.

Floor 3: imports the runtime and below only. Every operation validates its arguments at the call (what DVPP
checks on the host), then runs as a stream task ordered with copies, events and callbacks (``tasks.py``).
"""
