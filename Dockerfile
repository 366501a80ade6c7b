# SPDX-License-Identifier: GPL-2.0-only
# faultline on Debian bookworm: every package ./faultline installs, the tree
# built and `./faultline test` run while the image builds (a broken tree fails
# the build), `./faultline verify` as the default command.
#
#   docker build -t faultline . && docker run --rm faultline
#   podman build -t faultline . && podman run --rm faultline
#
# BASE lets tools/podman_check.sh build FROM a base image imported from a
# debootstrap tree, with no registry (./faultline docker-check).
ARG BASE=debian:bookworm
FROM ${BASE}

ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
WORKDIR /faultline

# The package list lives in ./faultline alone; copying only the entry point
# first keeps this (slow) layer cached while the sources change.
COPY faultline ./
RUN ./faultline deps && apt-get clean && rm -rf /var/lib/apt/lists/*

COPY . .
RUN ./faultline test

CMD ["./faultline", "verify"]
