# Shared set-up for scripts/serve and scripts/test (sourced, not executed).
#
# Everything here is idempotent and cheap when the machine is already set up:
#   - .venv is created once; `pip install -e '.[test]'` reruns only when pyproject.toml changed
#     (its hash is kept in .venv/.slipstream-install-stamp);
#   - system packages (Java 17, PostgreSQL, and for the client tests a JDK, pgjdbc and node) are
#     installed with apt-get only when missing.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="$REPO_ROOT/.venv"
STAMP="$VENV/.slipstream-install-stamp"
export DEBIAN_FRONTEND=noninteractive

say() { printf '[slipstream] %s\n' "$*" >&2; }

# Run a command as root: directly when we are root, through sudo when it is available.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -E "$@"
    else
        say "need root to run: $* (no sudo available); install it by hand and rerun"
        return 1
    fi
}

APT_UPDATED=0
apt_install() {
    if [ "$APT_UPDATED" -eq 0 ]; then
        say "apt-get update"
        as_root apt-get update -qq
        APT_UPDATED=1
    fi
    say "apt-get install -y $*"
    as_root apt-get install -y -qq --no-install-recommends "$@"
}

find_python() {
    local candidate
    for candidate in python3.11 python3.12 python3.13 python3; do
        if command -v "$candidate" >/dev/null 2>&1 &&
           "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
            command -v "$candidate"
            return 0
        fi
    done
    say "Python >= 3.11 not found"
    return 1
}

ensure_venv() {
    if [ ! -x "$VENV/bin/python" ]; then
        local python
        python="$(find_python)"
        say "creating $VENV with $python"
        if ! "$python" -m venv "$VENV" 2>/dev/null; then
            # Debian ships venv (ensurepip) separately.
            rm -rf "$VENV"
            apt_install python3-venv
            "$python" -m venv "$VENV"
        fi
    fi
    local want have=""
    want="$(sha256sum "$REPO_ROOT/pyproject.toml" | cut -d' ' -f1)"
    [ -f "$STAMP" ] && have="$(cat "$STAMP")"
    if [ "$want" != "$have" ]; then
        say "pip install -e '.[test]' (pyproject.toml changed since the last install)"
        "$VENV/bin/python" -m pip install -q --upgrade pip
        "$VENV/bin/python" -m pip install -q -e "$REPO_ROOT[test]"
        echo "$want" > "$STAMP"
    else
        say "python environment up to date ($VENV)"
    fi
}

ensure_java() {
    if command -v java >/dev/null 2>&1; then
        say "java found: $(command -v java)"
        return 0
    fi
    say "java not found: installing OpenJDK 17 (Spark needs a JVM)"
    apt_install openjdk-17-jre-headless
}

# PostgreSQL server binaries for the test oracle, and the psql client.
ensure_postgres() {
    if command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
        say "postgresql server binaries found"
    else
        say "initdb not found: installing PostgreSQL (the tests' oracle)"
        apt_install postgresql
    fi
    if command -v psql >/dev/null 2>&1; then
        say "psql found: $(command -v psql)"
    else
        apt_install postgresql-client
    fi
}

# What the client tests drive besides Python: pgjdbc (compiled against with javac) and node-postgres
# (its npm packages are installed by the test itself).
ensure_client_tools() {
    local missing=()
    command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
    if ! compgen -G "$HOME/.m2/repository/org/postgresql/postgresql/*/postgresql-*.jar" >/dev/null &&
       [ ! -e /usr/share/java/postgresql.jar ]; then
        missing+=(libpostgresql-jdbc-java)
    fi
    command -v node >/dev/null 2>&1 || missing+=(nodejs)
    command -v npm >/dev/null 2>&1 || missing+=(npm)
    if [ "${#missing[@]}" -eq 0 ]; then
        say "client tools found (javac, pgjdbc, node, npm)"
    else
        apt_install "${missing[@]}"
    fi
}
