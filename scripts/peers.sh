#!/usr/bin/env bash
# Installs the Python peers that `reproduce harris` times beside sketchlog (Halide 21 and
# OpenCV, from PyPI) into target/peers/venv. Optional: without them the peers' columns are
# empty. Exits 0 either way, saying what it did.
set -u
cd "$(dirname "$0")/.."
venv=target/peers/venv
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import halide, cv2, numpy' 2>/dev/null; then
  echo "peers: Halide and OpenCV already in $venv"
  exit 0
fi
if python3 -m venv "$venv" && "$venv/bin/pip" install --quiet 'halide==21.*' opencv-python-headless numpy; then
  echo "peers: Halide and OpenCV installed in $venv"
else
  echo "peers: could not install Halide and OpenCV (pip); reproduce harris leaves their columns empty"
fi
exit 0
