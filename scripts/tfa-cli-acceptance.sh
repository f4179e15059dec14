#!/usr/bin/env bash
# The full TOTP flow with the real `vastai` CLI (docs/client-compat.md §2.16) against
# the embedded platform: authorize (e-mail code, read from the development mailer's log) -> totp-setup ->
# activate (10 backup codes) -> login with TOTP -> login with a backup code -> status -> delete.
#
# Needs: `npm run build` done, and a python with vastai installed (VASTAI_PYTHON, default: python3;
# e.g. python3 -m venv /tmp/v && /tmp/v/bin/pip install vastai && VASTAI_PYTHON=/tmp/v/bin/python).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${VASTAI_PYTHON:-python3}
PORT=${PORT:-18090}
WORK=$(mktemp -d /tmp/tfa-cli.XXXXXX)
LOG=$WORK/server.log
ADMIN_KEY=tfa-acceptance-admin-key-0123456789

RIGMARKET_LOG_MESSAGES=1 RIGMARKET_ADMIN_KEY=$ADMIN_KEY RIGMARKET_DATA_DIR=$WORK/data PORT=$PORT LOG_LEVEL=info \
  RIGMARKET_TFA_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n') \
  node apps/platform/dist/main.js >"$LOG" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.2; done

export VAST_URL=http://127.0.0.1:$PORT VAST_API_KEY=$ADMIN_KEY VASTAI_NO_UPDATE_CHECK=1 HOME=$WORK/home
mkdir -p "$HOME"
vastai() { "$PY" -c 'import sys; sys.argv[0]="vastai"; from vastai.cli.main import main; main()' "$@"; }
# TOTP code (RFC 6238, SHA-1, 6 digits) for the base32 secret $1, $2 steps ahead of now.
totp() {
  "$PY" -c '
import base64, hmac, hashlib, struct, sys, time
key = base64.b32decode(sys.argv[1] + "=" * (-len(sys.argv[1]) % 8))
counter = int(time.time()) // 30 + int(sys.argv[2])
digest = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
offset = digest[-1] & 15
print("%06d" % ((struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1000000))' "$1" "$2"
}
step() { echo; echo "== $*"; }
fail() { echo "FAILED: $*" >&2; exit 1; }

step "tfa auth-new (e-mail, forced for an account without methods)"
out=$(vastai tfa auth-new </dev/null || true); echo "$out"
secret=$(sed -n 's/.*2FA Secret: \([0-9a-f]*\).*/\1/p' <<<"$out" | tail -1)
[ -n "$secret" ] || fail "no secret from auth-new"
code=$(grep -o '2FA code is [0-9]\{6\}' "$LOG" | tail -1 | grep -o '[0-9]\{6\}')
[ -n "$code" ] || fail "no e-mail code in the server log"
out=$(vastai tfa auth-new --secret "$secret" --code "$code"); echo "$out"
grep -q "Successfully authorized" <<<"$out" || fail "auth-new PUT"

step "tfa totp-setup"
setup=$(vastai --raw tfa totp-setup); echo "$setup"
totp_secret=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["secret"])' "$setup")

step "tfa activate"
out=$(printf '3\nyes\n' | vastai tfa activate "$(totp "$totp_secret" 0)" --secret "$totp_secret" -t totp -l "CLI phone" || true); echo "$out"
grep -q "activated successfully" <<<"$out" || fail "activate"
mapfile -t backup < <(grep -oE '\b[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}\b' <<<"$out" | sort -u)
[ "${#backup[@]}" -eq 10 ] || fail "expected 10 backup codes, got ${#backup[@]}"

step "tfa status"
status=$(vastai --raw tfa status); echo "$status"
method_id=$("$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["tfa_enabled"] is True; print(d["methods"][0]["id"])' "$status")

step "tfa login -t totp (next step's code: the activation code cannot be reused)"
out=$(vastai tfa login -t totp -c "$(totp "$totp_secret" 1)"); echo "$out"
grep -q "2FA login successful! Session key saved" <<<"$out" || fail "login with TOTP"

step "tfa login with a backup code (method id sent as a string)"
out=$(vastai tfa login --backup-code "${backup[0]}" -id "$method_id"); echo "$out"
grep -q "Backup codes remaining: 9" <<<"$out" || fail "login with a backup code"

step "wrong code: the CLI shows 2fa_verification_failed"
out=$(vastai tfa login -t totp -c 000000 2>&1 || true); echo "$out"

step "tfa delete (TOTP: next step after a step boundary, so newer than the step the login used)"
sleep $((31 - $(date +%s) % 30))
out=$(printf "y\n" | vastai tfa delete -id "$method_id" -t totp -c "$(totp "$totp_secret" 1)" 2>&1 || true); echo "$out"
status=$(vastai --raw tfa status); echo "$status"
"$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["tfa_enabled"] is False and d["methods"] == [], d' "$status" || fail "delete"

echo; echo "PASS: vastai tfa flow against the embedded platform"
