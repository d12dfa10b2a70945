# syntax=docker/dockerfile:1
# PX4 SITL's build environment with PX4 built and mavsitl added, so that
# `mavsitl px4 --px4-build /opt/PX4-Autopilot/build/px4_sitl_default` flies
# real PX4 in one container. Build the mavsitl image first (docker/Dockerfile,
# tag mavsitl), then:
#   docker build -f docker/px4.Dockerfile -t mavsitl-px4 .
#   docker run --rm mavsitl-px4 px4 --px4-build /opt/PX4-Autopilot/build/px4_sitl_default \
#       --mission missions/quad_square.plan

ARG MAVSITL_IMAGE=mavsitl
ARG PX4_DEV_IMAGE=px4io/px4-dev-base-jammy:2024-05-18
FROM ${MAVSITL_IMAGE} AS mavsitl

FROM ${PX4_DEV_IMAGE}
ARG PX4_REF=v1.15.4
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
RUN git clone --depth 1 --branch "${PX4_REF}" --recurse-submodules --shallow-submodules \
        https://github.com/PX4/PX4-Autopilot.git /opt/PX4-Autopilot
WORKDIR /opt/PX4-Autopilot
RUN make px4_sitl_default
COPY --from=mavsitl /usr/local/bin/mavsitl /usr/local/bin/mavsitl
COPY --from=mavsitl /home/mavsitl/missions /opt/mavsitl/missions
COPY --from=mavsitl /home/mavsitl/suites /opt/mavsitl/suites
COPY --from=mavsitl /home/mavsitl/firmware_configs /opt/mavsitl/firmware_configs
WORKDIR /opt/mavsitl
ENV PX4_BUILD_DIR=/opt/PX4-Autopilot/build/px4_sitl_default
ENTRYPOINT ["mavsitl"]
CMD ["px4", "--mission", "missions/quad_square.plan"]
