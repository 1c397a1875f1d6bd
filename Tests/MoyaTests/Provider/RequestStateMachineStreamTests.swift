import Foundation
import Testing

@testable import Moya

/// The request's state machine for a streamed response, without a network: the head goes to
/// the callers and the work stays attached while the body is read; the end or the consumer
/// stopping ends it, once.
@Suite("Request state machine, streaming")
struct RequestStateMachineStreamTests {
    typealias Machine = RequestStateMachine<Int>

    /// A machine whose single caller's request was sent, with work 1.
    private static func sending() -> (Machine, Int) {
        var machine = Machine()
        let id = machine.subscribe({ _ in }, callbackQueue: nil)!
        _ = machine.requestBuilt()
        _ = machine.workStarted(1)
        return (machine, id)
    }

    private static let head = Moya.Response(statusCode: 200, data: Data())

    /// The end by a result.
    private static func finished(_ machine: inout Machine) -> Machine.FinishAction {
        machine.finish(.success(head), cause: .result)
    }

    /// The consumer stopping.
    private static func stopped(_ machine: inout Machine) -> Machine.FinishAction {
        machine.finish(.failure(.requestCancelled), cause: .streamStopped)
    }

    @Test("streamStarted hands the head to the callers; finished ends the stream, with nobody to deliver to")
    func startAndEnd() {
        var (machine, id) = Self.sending()
        #expect(!machine.hasStreamed)
        guard let callers = machine.streamStarted(head: Self.head) else {
            Issue.record("the head went to nobody")
            return
        }
        #expect(callers.map(\.id) == [id])
        #expect(machine.phase == .streaming)
        #expect(machine.isActive)
        guard case .end(let ending) = Self.finished(&machine) else {
            Issue.record("the stream did not end")
            return
        }
        #expect(ending.streamed)
        #expect(ending.callers.isEmpty)
        #expect(ending.work == nil)
        #expect(machine.phase == .finished)
        // What interceptors read to know the response was the caller's: it stays after the end.
        #expect(machine.hasStreamed)
        guard case .none = Self.finished(&machine) else {
            Issue.record("ended twice")
            return
        }
        guard case .none = Self.stopped(&machine) else {
            Issue.record("stopped after the end")
            return
        }
    }

    @Test("While streaming, the consumer stopping hands back the work to stop, once")
    func consumerStops() {
        var (machine, _) = Self.sending()
        _ = machine.streamStarted(head: Self.head)
        guard case .end(let ending) = Self.stopped(&machine) else {
            Issue.record("nothing to stop")
            return
        }
        #expect(ending.work == 1)
        #expect(ending.driver == nil)
        #expect(ending.streamed)
        #expect(machine.phase == .finished)
        guard case .none = Self.stopped(&machine) else {
            Issue.record("stopped twice")
            return
        }
        guard case .none = Self.finished(&machine) else {
            Issue.record("a result after the cancel")
            return
        }
    }

    @Test("The attempt may be recorded after its head was handed over")
    func workAfterHead() {
        var machine = Machine()
        _ = machine.subscribe({ _ in }, callbackQueue: nil)
        _ = machine.requestBuilt()
        _ = machine.streamStarted(head: Self.head)
        guard case .proceed = machine.workStarted(4) else {
            Issue.record("the attempt was refused")
            return
        }
        guard case .end(let ending) = Self.stopped(&machine) else {
            Issue.record("nothing to stop")
            return
        }
        #expect(ending.work == 4)
    }

    @Test("A stream is never retried once its head was handed over")
    func noRetry() {
        var (machine, _) = Self.sending()
        _ = machine.streamStarted(head: Self.head)
        let retried = machine.retryDecided()
        #expect(!retried)
        #expect(machine.phase == .streaming)
    }

    @Test("A caller's cancel while streaming does nothing: the callers have the head already")
    func callerCancelWhileStreaming() {
        var (machine, id) = Self.sending()
        _ = machine.streamStarted(head: Self.head)
        guard case .none = machine.finish(.failure(.requestCancelled), cause: .cancel(subscriber: id, preempting: { _ in true })) else {
            Issue.record("the caller's cancel acted on a stream it no longer holds")
            return
        }
        #expect(machine.phase == .streaming)
    }

    @Test("Before the head, the consumer stopping is not a stream cancel; a cancelled request starts no stream")
    func beforeTheHead() {
        var (machine, id) = Self.sending()
        guard case .none = Self.stopped(&machine) else {
            Issue.record("a stream stopped before it started")
            return
        }
        guard case .end = machine.finish(.failure(.requestCancelled), cause: .cancel(subscriber: id, preempting: { _ in true })) else {
            Issue.record("the caller's cancel did not stop the request")
            return
        }
        let started = machine.streamStarted(head: Self.head)
        #expect(started == nil)
    }
}
