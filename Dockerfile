# Slipstream server image: Python 3.11 + Java 17 (Spark's JVM) + the slipstream package.
#   docker build -t slipstream .
#   docker run -p 6875:6875 -p 6876:6876 -v slipstream-data:/data slipstream
# The same image also runs the Spark worker in docker-compose.yml, so that executors have the
# same Python and the same slipstream code as the driver (PySpark requires matching versions).
FROM python:3.11-slim-bookworm

# Keep in step with the pyspark the project installs and with the apache/spark master image.
ARG SPARK_VERSION=4.3.0

RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps tini \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY pyproject.toml README.md ./
COPY server ./server
COPY planner ./planner
COPY dataflow ./dataflow
COPY catalog ./catalog
COPY storage ./storage
RUN pip install --no-cache-dir . "pyspark==${SPARK_VERSION}"

RUN useradd --create-home --uid 1000 slipstream \
 && mkdir -p /data && chown slipstream:slipstream /data
USER slipstream
VOLUME /data
EXPOSE 6875 6876

ENTRYPOINT ["tini", "--"]
CMD ["slipstream", "serve", "--host", "0.0.0.0", "--port", "6875", "--data-dir", "/data"]
