# Shared by plugin/bin/aide-memoire-mcp and plugin/bin/aide-memoire-hook (sourced, POSIX sh).
#
# Which `aide-memoire` the plugin runs, in this order:
#   1. $AIDE_MEMOIRE_BIN, when the user set it (a wrong value is an error, not a fallback:
#      the user asked for that program);
#   2. `aide-memoire` on PATH, then ~/.local/bin/aide-memoire (pipx's folder, often missing
#      from the PATH of an editor started from a desktop), so a user who installed the
#      command keeps theirs and every client shares one program;
#   3. the plugin's own environment in its data folder, set up on first use from the
#      package source the plugin ships (plugin/pkg), by plugin/lib/bootstrap.py.
# The fast path (an environment already set up) costs a `cat` and a `sed`: it runs before
# every prompt.

AM_ROOT=${CLAUDE_PLUGIN_ROOT:-$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)}
# Claude Code passes CLAUDE_PLUGIN_DATA to the plugin's hooks and servers; the fallback is
# the folder it would name (~/.claude/plugins/data/<plugin>-<marketplace>).
AM_DATA=${CLAUDE_PLUGIN_DATA:-${HOME:-.}/.claude/plugins/data/aide-memoire-aide-memoire}
AM_VENV="$AM_DATA/venv"
AM_STAMP="$AM_VENV/.aide-memoire-stamp"
# What the plugin's environment holds: `all` by default (dense recall, code index); a
# smaller set where disk or time is short, e.g. `vectors` (keyword recall, no torch, no
# model) or `none` (the package alone).
AM_EXTRAS=${AIDE_MEMOIRE_PLUGIN_EXTRAS:-all}
# The CPU build of torch, pinned as in the repository's Makefile: an unpinned torch on
# Linux pulls the multi-GB CUDA build.
AM_TORCH=${AIDE_MEMOIRE_PLUGIN_TORCH:-torch==2.13.0}
# Where pip finds that CPU build: pip's own configuration unless this names an index
# (PyTorch's CPU wheel index, from its install page) for the torch step only.
AM_TORCH_INDEX=${AIDE_MEMOIRE_PLUGIN_TORCH_INDEX:-}

am_version() {
    sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$AM_ROOT/pkg/server/aide_memoire/_version.py" \
        2>/dev/null
}

# The stamp names what was installed; another version or extras means a new setup.
am_key() {
    printf 'aide-memoire %s extras=%s torch=%s\n' "$(am_version)" "$AM_EXTRAS" "$AM_TORCH"
}

am_ready() {
    [ -x "$AM_VENV/bin/aide-memoire" ] && [ -f "$AM_STAMP" ] \
        && [ "$(cat "$AM_STAMP" 2>/dev/null)" = "$(am_key)" ]
}

# Sets AM_CMD to the user's own command, if there is one; 2 when AIDE_MEMOIRE_BIN is wrong.
am_user_command() {
    if [ -n "${AIDE_MEMOIRE_BIN:-}" ]; then
        if [ -x "$AIDE_MEMOIRE_BIN" ] && [ ! -d "$AIDE_MEMOIRE_BIN" ]; then
            AM_CMD=$AIDE_MEMOIRE_BIN
            return 0
        fi
        echo "aide-memoire plugin: AIDE_MEMOIRE_BIN is set to '$AIDE_MEMOIRE_BIN', which is not an executable file." >&2
        echo "Point it at the aide-memoire command (for example \$HOME/.local/bin/aide-memoire) or unset it to use the plugin's own environment." >&2
        return 2
    fi
    if command -v aide-memoire >/dev/null 2>&1; then
        AM_CMD=aide-memoire
        return 0
    fi
    if [ -n "${HOME:-}" ] && [ -x "$HOME/.local/bin/aide-memoire" ]; then
        AM_CMD=$HOME/.local/bin/aide-memoire
        return 0
    fi
    return 1
}

# A Python 3.11+ to build the environment with ($AIDE_MEMOIRE_PYTHON first).
am_python() {
    for candidate in ${AIDE_MEMOIRE_PYTHON:-} python3.13 python3.12 python3.11 python3; do
        if command -v "$candidate" >/dev/null 2>&1 \
            && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

# Starts (or joins) the first-use setup. $1 = wait: follow its progress on stderr until it
# ends; nowait: start it in the background and return at once (hooks must not block).
am_bootstrap() {
    python=$(am_python) || {
        echo "aide-memoire plugin: no Python 3.11 or newer found (looked for python3.13, python3.12, python3.11, python3; set AIDE_MEMOIRE_PYTHON to choose one). Install Python 3.11+ and restart Claude Code." >&2
        return 1
    }
    "$python" "$AM_ROOT/lib/bootstrap.py" "$1" --data "$AM_DATA" --pkg "$AM_ROOT/pkg" \
        --key "$(am_key)" --extras "$AM_EXTRAS" --torch "$AM_TORCH" \
        --torch-index "$AM_TORCH_INDEX"
}
