# syntax=docker/dockerfile:1
# ArduPilot SITL (Copter and Rover) built in its own Ubuntu environment, with
# mavsitl added: `mavsitl ardupilot --ardupilot /opt/ardupilot` in one
# container. Build the mavsitl image first (docker/Dockerfile, tag mavsitl):
#   docker build -f docker/ardupilot.Dockerfile -t mavsitl-ardupilot .
#   docker run --rm mavsitl-ardupilot ardupilot --mission missions/quad_square.plan

ARG MAVSITL_IMAGE=mavsitl
FROM ${MAVSITL_IMAGE} AS mavsitl

FROM ubuntu:22.04
ARG ARDUPILOT_REF=Copter-4.5.7
ENV DEBIAN_FRONTEND=noninteractive
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# Ubuntu's archive replaces package versions within a release: pinning
# them would break this build within months.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        ca-certificates git g++ make python3 python3-pip python3-dev \
    && rm -rf /var/lib/apt/lists/* \
    && pip3 install --no-cache-dir empy==3.3.4 pexpect==4.9.0 future==1.0.0 dronecan==1.0.26
RUN git clone --depth 1 --branch "${ARDUPILOT_REF}" --recurse-submodules --shallow-submodules \
        https://github.com/ArduPilot/ardupilot.git /opt/ardupilot
WORKDIR /opt/ardupilot
RUN ./waf configure --board sitl && ./waf copter rover
COPY --from=mavsitl /usr/local/bin/mavsitl /usr/local/bin/mavsitl
COPY --from=mavsitl /home/mavsitl/missions /opt/mavsitl/missions
COPY --from=mavsitl /home/mavsitl/suites /opt/mavsitl/suites
COPY --from=mavsitl /home/mavsitl/firmware_configs /opt/mavsitl/firmware_configs
WORKDIR /opt/mavsitl
ENV ARDUPILOT_HOME=/opt/ardupilot
ENTRYPOINT ["mavsitl"]
CMD ["ardupilot", "--mission", "missions/quad_square.plan"]
