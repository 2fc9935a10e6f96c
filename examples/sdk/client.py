#!/usr/bin/env python3
"""Drive dsh from Python over the dsh SDK protocol (docs/sdk.md).

    python3 examples/sdk/client.py WORKSPACE "PROMPT" [extra dsh sdk flags...]

Starts `dsh sdk` (DSH_COMMAND overrides the command, e.g. "node bin/dsh.js"), initializes it,
sends one prompt, prints the final answer once the session is idle again, and shuts it down.
Standard library only.
"""
import json
import os
import shlex
import subprocess
import sys
import uuid


class Dsh:
    def __init__(self, flags):
        command = shlex.split(os.environ.get("DSH_COMMAND", "dsh"))
        self.proc = subprocess.Popen(command + ["sdk"] + flags, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.next_id = 1

    def send(self, method, params=None):
        request_id = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        return request_id

    def messages(self):
        for line in self.proc.stdout:
            yield json.loads(line)

    def call(self, method, params=None, on_notification=None):
        """Send a request; hand notifications to on_notification until its response arrives."""
        request_id = self.send(method, params)
        for message in self.messages():
            if message.get("id") == request_id:
                if "error" in message:
                    error = message["error"]
                    raise RuntimeError(f"{error['data']['code']}: {error['message']}")
                return message["result"]
            if on_notification:
                on_notification(message)
        raise RuntimeError("dsh sdk exited")


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: client.py WORKSPACE PROMPT [dsh sdk flags...]")
    workspace, prompt, flags = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    dsh = Dsh(flags)
    session_id = f"example-{uuid.uuid4()}"
    init = dsh.call("initialize", {"cwd": workspace, "provider": "deepseek", "model": "deepseek-v4-flash"})
    print(f"[dsh {init['serverInfo']['version']}, model {init['model']}, session {session_id}]", file=sys.stderr)

    answer = []  # the text of the last assistant message
    seen = []  # session.status values, in order

    def note(message):
        params = message.get("params", {})
        if params.get("sessionId") != session_id:
            return
        if message["method"] == "session.status":
            seen.append(params["status"])
        elif params["event"]["type"] == "assistant/message":
            text = "".join(b["text"] for b in params["event"]["data"]["message"]["content"] if b["type"] == "text")
            if text.strip():
                answer[:] = [text]

    dsh.call("session/prompt", {"sessionId": session_id, "contentBlocks": [{"type": "text", "text": prompt}]}, note)
    # The prompt is queued; the turn's events follow. Idle after running means the turn is over.
    for message in dsh.messages():
        note(message)
        if "running" in seen and seen[-1] == "idle":
            break
    print(answer[0] if answer else "")
    dsh.call("shutdown")
    dsh.proc.stdin.close()
    dsh.proc.wait()


if __name__ == "__main__":
    main()
