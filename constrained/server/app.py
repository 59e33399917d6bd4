"""The HTTP side: an ASGI application (Starlette) with OpenAI's routes.

Routes: ``GET /health``, ``GET /v1/models``, ``POST /v1/completions`` (``suffix``: infill),
``POST /v1/chat/completions``. Streams are server-sent events ending in ``data: [DONE]``.
Failures are closed: a request the server cannot honour exactly is refused with a JSON error
naming the field, never answered without its constraint.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import traceback
from typing import Any, AsyncIterator

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from ..errors import BudgetError
from .engine import Event, Job
from .formatting import Formatter, finish_reason, usage
from .protocol import RequestError, RequestPlan, chat_plan, completion_plan
from .service import Service

_POLL_SECONDS = 0.5


def create_app(service: Service) -> Starlette:
    """The ASGI application of a Service (run it with uvicorn or any ASGI server)."""

    async def health(request: Request) -> JSONResponse:
        engine = service.engine
        return JSONResponse({"status": "ok", "model": service.model_name,
                             "rows": engine.rows_in_use, "waiting": engine.waiting,
                             "max_rows": engine.max_rows})

    async def models(request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [
            {"id": service.model_name, "object": "model", "created": 0,
             "owned_by": "constrained"}]})

    async def completions(request: Request):
        return await _generate(request, chat=False)

    async def chat_completions(request: Request):
        return await _generate(request, chat=True)

    async def _generate(request: Request, chat: bool):
        try:
            body = await _read_json(request, service.limits.max_request_bytes)
            maker = chat_plan if chat else completion_plan
            plan = maker(body, max_n=service.limits.max_n)
            service.check_model(body.get("model"))
            loop = asyncio.get_running_loop()
            job, lengths = await run_in_threadpool(service.prepare, plan, loop)
            service.engine.submit(job)
        except RequestError as exc:
            return _error(exc)
        except Exception as exc:  # a bug, not the request's fault: say so, generate nothing
            return _error(_row_error(exc, None))
        fmt = Formatter(chat, service.model_name, service.vocab.token_bytes,
                        service.vocab.n_tokens, plan.tokens_as_ids, plan.tools)
        prompt_tokens = sum(lengths[p * plan.n] for p in range(len(plan.prompts)))
        events = _events(job, request)
        try:
            first = await events.__anext__()
        except StopAsyncIteration:
            return _error(RequestError("the client went away", None, status=499))
        if first.kind == "done" and first.error is not None:
            job.cancel()
            await events.aclose()
            return _error(_row_error(first.error, plan))
        if plan.stream:
            return StreamingResponse(_sse(job, plan, fmt, first, events, prompt_tokens),
                                     media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache"})
        return await _whole(job, plan, fmt, first, events, prompt_tokens)

    routes = [Route("/health", health, methods=["GET"]),
              Route("/v1/models", models, methods=["GET"]),
              Route("/v1/completions", completions, methods=["POST"]),
              Route("/v1/chat/completions", chat_completions, methods=["POST"])]
    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        service.close()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.service = service
    return app


# requests and errors ---------------------------------------------------------------------------
async def _read_json(request: Request, limit: int) -> Any:
    """The body as JSON; over ``limit`` bytes a 413. A moderately oversized body is read to its
    end (and dropped) first, so the client gets the answer instead of a reset connection; one
    declared or found beyond eight times the limit is refused at once."""
    declared = request.headers.get("content-length")
    too_large = RequestError(f"the request body is larger than {limit} bytes", None, status=413)
    if declared is not None and declared.isdigit() and int(declared) > 8 * limit:
        raise too_large
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size <= limit:
            chunks.append(chunk)
        elif size > 8 * limit:
            break
    if size > limit:
        raise too_large
    raw = b"".join(chunks)
    try:
        return json.loads(raw)
    except RecursionError:
        raise RequestError("the request body is nested too deeply", None) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" \
            if isinstance(exc, json.JSONDecodeError) else ""
        raise RequestError(f"the request body is not valid JSON{where}", None) from None


def _error(exc: RequestError) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status)


def _row_error(error: BaseException, plan: RequestPlan | None) -> RequestError:
    if isinstance(error, RequestError):
        return error
    if isinstance(error, BudgetError) and plan is not None:
        return RequestError(str(error), plan.max_tokens_param)
    traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
    return RequestError(f"generation failed: {error}", None, status=500, kind="server_error")


async def _events(job: Job, request: Request) -> AsyncIterator[Event]:
    """The job's events until every row is done; a client that goes away cancels the job."""
    left = len(job.rows)
    try:
        while left:
            try:
                event = await asyncio.wait_for(job.queue.get(), timeout=_POLL_SECONDS)
            except asyncio.TimeoutError:
                if await request.is_disconnected():
                    return
                continue
            if event.kind == "done":
                left -= 1
            yield event
    finally:
        if left:
            job.cancel()


# answers ---------------------------------------------------------------------------------------
def _logprobs_of(fmt: Formatter, row, start: int, end: int, offset: int = 0):
    return fmt.logprobs(row.tokens[start:end], row.token_logprobs[start:end],
                        row.top_logprobs[start:end], offset)


async def _whole(job: Job, plan: RequestPlan, fmt: Formatter, first: Event, events,
                 prompt_tokens: int) -> JSONResponse:
    results: dict[int, Any] = {}
    event: Event | None = first
    while event is not None:
        if event.kind == "done":
            if event.error is not None:
                job.cancel()
                await events.aclose()
                return _error(_row_error(event.error, plan))
            results[event.choice] = event.result
        try:
            event = await events.__anext__()
        except StopAsyncIteration:
            event = None
    if len(results) != len(job.rows):
        return _error(RequestError("the client went away", None, status=499))
    choices, generated = [], 0
    for i, row in enumerate(job.rows):
        result = results[i]
        generated += len(result.token_ids)
        lp = None
        if plan.logprobs is not None:
            lp = fmt.logprobs(result.token_ids, result.token_logprobs, result.top_logprobs)
        choices.append(fmt.choice(i, result, lp))
    return JSONResponse(fmt.response(choices, usage(prompt_tokens, generated)))


async def _next(events) -> Event | None:
    try:
        return await events.__anext__()
    except StopAsyncIteration:
        return None


async def _sse(job: Job, plan: RequestPlan, fmt: Formatter, first: Event, events,
               prompt_tokens: int) -> AsyncIterator[bytes]:
    sent = [0] * len(job.rows)       # tokens whose logprobs were sent, per choice
    texts = [0] * len(job.rows)      # characters sent, per choice (completion text offsets)
    generated = 0
    include = plan.include_usage

    def data(obj: dict) -> bytes:
        return f"data: {json.dumps(obj, ensure_ascii=False)}\n\n".encode("utf-8")

    def logprobs_upto(choice: int, end: int):
        if plan.logprobs is None or end <= sent[choice]:
            return None
        lp = _logprobs_of(fmt, job.rows[choice], sent[choice], end, texts[choice])
        sent[choice] = end
        return lp

    event: Event | None = first
    try:
        while event is not None:
            c = event.choice
            if event.kind == "started":
                if plan.chat:
                    yield data(fmt.chunk(c, "", role=True, usage=include))
            elif event.kind == "piece":
                if plan.tools:        # the answer is sent whole once it is known
                    event = await _next(events)
                    continue
                lp = logprobs_upto(c, event.n_tokens)
                yield data(fmt.chunk(c, event.text, logprobs=lp, usage=include))
                texts[c] += len(event.text)
            elif event.error is not None:
                error = _row_error(event.error, plan)
                yield data(error.body())
                job.cancel()
                return
            else:
                result = event.result
                generated += len(result.token_ids)
                lp = logprobs_upto(c, len(result.token_ids))
                reason = finish_reason(result.finish_reason)
                if plan.tools:
                    body, reason = fmt.tool_call_chunk(c, result)
                    yield data(body)
                yield data(fmt.chunk(c, None if plan.chat else "", logprobs=lp,
                                     finish=reason, usage=include))
            event = await _next(events)
        if include:
            yield data(fmt.usage_chunk(usage(prompt_tokens, generated)))
        yield b"data: [DONE]\n\n"
    finally:
        await events.aclose()
