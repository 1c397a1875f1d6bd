import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// Reads `buffer` to its end on a task of its own: the elements, or the error it ended with.
private func reader<Element: Sendable>(_ buffer: BoundedBuffer<Element>) -> _Concurrency.Task<[Element], any Error> {
    _Concurrency.Task {
        var elements: [Element] = []
        while true {
            switch await buffer.next() {
            case .success(let element?): elements.append(element)
            case .success(nil): return elements
            case .failure(let error): throw error
            }
        }
    }
}

/// What `next()` answered, comparable: an element, the end, or an error's description.
private enum Outcome<Element: Equatable & Sendable>: Equatable, Sendable {
    case element(Element)
    case end
    case failure(String)
}

/// `buffer`'s next element, as an ``Outcome``.
private func take<Element: Equatable & Sendable>(_ buffer: BoundedBuffer<Element>) async -> Outcome<Element> {
    switch await buffer.next() {
    case .success(let element?): .element(element)
    case .success(nil): .end
    case .failure(let error): .failure("\(error)")
    }
}

/// The description of the cancellation error, as an ``Outcome`` holds it.
private let cancelled = Outcome<Int>.failure("\(MoyaError.requestCancelled)")

/// What a receiver was handed, in order.
private enum Handed: Equatable, Sendable {
    case element(Int)
    case end(String?)
}

/// A receiver's record: what it was handed, and whether two threads were ever inside it at once.
private final class DeliveryRecorder: Sendable {
    private struct State {
        var deliveries: [Handed] = []
        var inside = false
        var overlapped = false
    }

    private let state = Locked(State())
    /// The demand each element answers with.
    let answer: Int

    init(answer: Int = 0) {
        self.answer = answer
    }

    var deliveries: [Handed] { state.value.deliveries }
    var overlapped: Bool { state.value.overlapped }

    func attach(to buffer: BoundedBuffer<Int>) {
        buffer.setReceiver(
            receive: { self.record(.element($0)) },
            complete: { end in
                if case .failure(let error) = end {
                    _ = self.record(.end("\(error)"))
                } else {
                    _ = self.record(.end(nil))
                }
            })
    }

    private func record(_ delivery: Handed) -> Int {
        state.update { state in
            if state.inside { state.overlapped = true }
            state.inside = true
        }
        state.update { state in
            state.deliveries.append(delivery)
            state.inside = false
        }
        return answer
    }
}

@Suite("The bounded buffer between a producer and one consumer, without a network")
struct BoundedBufferTests {
    // MARK: Order and end

    @Test("Elements come out in order, then the end once, then nothing")
    func order() async {
        let buffer = BoundedBuffer<Int>()
        for value in 1...5 { #expect(buffer.put(value)) }
        buffer.finish(.success(()))
        #expect(!buffer.put(6))
        var values: [Int] = []
        while case .success(let value?) = await buffer.next() { values.append(value) }
        #expect(values == [1, 2, 3, 4, 5])
        #expect(await take(buffer) == .end)
    }

    @Test("The end reaches a consumer that waits, after the elements it had not taken")
    func endAfterLastElement() async throws {
        let buffer = BoundedBuffer<Int>()
        let read = reader(buffer)
        #expect(await eventually { buffer.hasWaitingConsumer })
        // A burst: the first element asks for a wake, which comes only after the end.
        #expect(buffer.append(1) == .moreAndWake)
        #expect(buffer.append(2) == .more)
        buffer.finish(.success(()))
        buffer.wakeConsumer()
        #expect(try await read.value == [1, 2])
    }

    @Test("A failure comes after the elements, once")
    func failure() async {
        let buffer = BoundedBuffer<Int>()
        buffer.put(1)
        buffer.finish(.failure(.requestMapping("broken")))
        buffer.finish(.success(()))
        #expect(await take(buffer) == .element(1))
        guard case .failure(.requestMapping("broken")) = await buffer.next() else {
            Issue.record("expected the error")
            return
        }
        #expect(await take(buffer) == .end)
    }

    @Test("A failure reaches a consumer that waits")
    func failureToWaitingConsumer() async {
        let buffer = BoundedBuffer<Int>()
        let read = reader(buffer)
        #expect(await eventually { buffer.hasWaitingConsumer })
        buffer.finish(.failure(.requestMapping("broken")))
        guard case .failure(let error) = await read.result, case .requestMapping("broken")? = error as? MoyaError else {
            Issue.record("expected the error")
            return
        }
    }

    @Test("Elements that weigh nothing are not kept")
    func weightless() async {
        let buffer = BoundedBuffer<Data>(limit: 10, weight: { $0.count })
        #expect(buffer.append(Data()) == .more)
        #expect(buffer.append(Data("a".utf8)) == .more)
        buffer.finish(.success(()))
        #expect(await take(buffer) == .element(Data("a".utf8)))
        #expect(await take(buffer) == .end)
    }

    // MARK: Limit

    @Test("Above the limit the producer pauses, and goes on once the consumer took it down to half")
    func backPressure() async throws {
        let buffer = BoundedBuffer<Int>(limit: 10, weight: { $0 })
        #expect(buffer.append(6) == .more)
        #expect(buffer.append(6) == .pause)
        #expect(buffer.bufferedWeight == 12)
        let resumed = Locked(0)
        buffer.waitForDemand { resumed.update { $0 += 1 } }
        #expect(resumed.value == 0)
        #expect(await take(buffer) == .element(6))
        // 6 left: above half the limit (5).
        #expect(resumed.value == 0)
        #expect(await take(buffer) == .element(6))
        #expect(resumed.value == 1)
    }

    @Test("Demand that comes before the producer asks for it is not lost")
    func earlyDemand() async {
        let buffer = BoundedBuffer<Int>(limit: 1)
        #expect(buffer.append(1) == .more)
        #expect(buffer.append(2) == .pause)
        _ = await buffer.next()
        _ = await buffer.next()
        let resumed = Locked(0)
        buffer.waitForDemand { resumed.update { $0 += 1 } }
        #expect(resumed.value == 1)
    }

    @Test("An element heavier than the limit reaches a consumer that waits (no deadlock)")
    func heavyElementToWaitingConsumer() async throws {
        let buffer = BoundedBuffer<Int>(limit: 4, weight: { $0 })
        let read = reader(buffer)
        #expect(await eventually { buffer.hasWaitingConsumer })
        #expect(buffer.append(100) == .more)
        buffer.finish(.success(()))
        #expect(try await read.value == [100])
    }

    @Test("Dropping the oldest keeps the latest elements, and always the newest")
    func dropOldest() async {
        let buffer = BoundedBuffer<Int>(limit: 3, overflow: .dropOldest)
        for value in 1...10 { #expect(buffer.append(value) == .more) }
        #expect(buffer.bufferedWeight == 3)
        buffer.finish(.success(()))
        #expect(await take(buffer) == .element(8))
        #expect(await take(buffer) == .element(9))
        #expect(await take(buffer) == .element(10))
        #expect(await take(buffer) == .end)

        let heavy = BoundedBuffer<Int>(limit: 5, overflow: .dropOldest, weight: { $0 })
        heavy.put(2)
        heavy.put(50)
        #expect(heavy.bufferedWeight == 50)
        #expect(await take(heavy) == .element(50))
    }

    @Test("send waits while the buffer is over its limit, and returns false once the consumer stopped")
    func sendWaits() async {
        let buffer = BoundedBuffer<Int>(limit: 2)
        #expect(await buffer.send(1))
        #expect(await buffer.send(2))
        let third = _Concurrency.Task { await buffer.send(3) }
        // The third is kept, and its producer waits.
        #expect(await eventually { buffer.bufferedWeight == 3 })
        #expect(await take(buffer) == .element(1))
        #expect(await take(buffer) == .element(2))
        let thirdSent = await third.value
        #expect(thirdSent)

        #expect(await buffer.send(4))
        let fifth = _Concurrency.Task { await buffer.send(5) }
        #expect(await eventually { buffer.bufferedWeight == 3 })
        buffer.consumerStopped()
        let fifthSent = await fifth.value
        #expect(!fifthSent)
        let sixthSent = await buffer.send(6)
        #expect(!sixthSent)
    }

    // MARK: Stopping

    @Test("A consumer that stops calls the stop handler once, drops the elements and releases a paused producer")
    func consumerStops() async {
        let buffer = BoundedBuffer<Int>(limit: 1)
        let stopped = Locked(0)
        buffer.setStopHandler { _ in stopped.update { $0 += 1 } }
        #expect(buffer.append(1) == .more)
        #expect(buffer.append(2) == .pause)
        let resumed = Locked(0)
        buffer.waitForDemand { resumed.update { $0 += 1 } }
        buffer.consumerStopped()
        buffer.consumerStopped()
        #expect(stopped.value == 1)
        #expect(resumed.value == 1)
        #expect(buffer.isStopped)
        #expect(buffer.bufferedWeight == 0)
        #expect(buffer.append(3) == .stopped)
        #expect(await take(buffer) == cancelled)
        #expect(await take(buffer) == .end)
        #expect(stopped.value == 1)
    }

    @Test("After the end there is no work to stop: the handler is not called")
    func stopAfterEnd() {
        let buffer = BoundedBuffer<Int>()
        let stopped = Locked(0)
        buffer.setStopHandler { _ in stopped.update { $0 += 1 } }
        buffer.finish(.success(()))
        buffer.consumerStopped()
        #expect(stopped.value == 0)
    }

    @Test("A stop handler set after the consumer stopped is called at once")
    func handlerAfterStop() {
        let buffer = BoundedBuffer<Int>()
        buffer.consumerStopped()
        let stopped = Locked(0)
        buffer.setStopHandler { _ in stopped.update { $0 += 1 } }
        #expect(stopped.value == 1)
    }

    @Test("Cancelling a waiting consumer's task stops the buffer and calls the handler once")
    func cancelWhileWaiting() async {
        let buffer = BoundedBuffer<Int>()
        let stopped = Locked(0)
        buffer.setStopHandler { _ in stopped.update { $0 += 1 } }
        let read = reader(buffer)
        #expect(await eventually { buffer.hasWaitingConsumer })
        read.cancel()
        guard case .failure(let error) = await read.result else {
            Issue.record("expected the cancellation")
            return
        }
        #expect((error as? MoyaError)?.isCancelled == true)
        #expect(stopped.value == 1)
        #expect(buffer.isStopped)
        #expect(buffer.append(1) == .stopped)
    }

    @Test("Only one consumer may claim the elements")
    func oneClaim() {
        let buffer = BoundedBuffer<Int>()
        #expect(buffer.claim())
        #expect(!buffer.claim())
    }

    // MARK: Start

    @Test("The first next() starts the producer, once")
    func startOnFirstNext() async {
        let buffer = BoundedBuffer<Int>()
        let starts = Locked(0)
        buffer.setStart {
            starts.update { $0 += 1 }
            buffer.put(1)
            buffer.put(2)
            buffer.finish(.success(()))
        }
        #expect(starts.value == 0)
        #expect(await take(buffer) == .element(1))
        #expect(await take(buffer) == .element(2))
        #expect(await take(buffer) == .end)
        #expect(starts.value == 1)
    }

    @Test("A task cancelled before its first next() never starts the producer")
    func cancelledBeforeStart() async {
        let buffer = BoundedBuffer<Int>()
        let starts = Locked(0)
        buffer.setStart { starts.update { $0 += 1 } }
        let read = _Concurrency.Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await take(buffer)
        }
        #expect(await read.value == cancelled)
        #expect(starts.value == 0)
        #expect(buffer.isStopped)
    }

    // MARK: Receiver

    @Test("A receiver gets elements as far as its demand goes, and the end after the last one, whatever the demand")
    func receiverDemand() {
        let buffer = BoundedBuffer<Int>()
        let recorder = DeliveryRecorder()
        recorder.attach(to: buffer)
        let starts = Locked(0)
        buffer.setStart { starts.update { $0 += 1 } }
        for value in 1...4 { buffer.put(value) }
        #expect(recorder.deliveries.isEmpty)
        #expect(starts.value == 0)
        buffer.request(0)
        #expect(starts.value == 0)
        buffer.request(2)
        #expect(starts.value == 1)
        #expect(recorder.deliveries == [.element(1), .element(2)])
        buffer.finish(.success(()))
        #expect(recorder.deliveries == [.element(1), .element(2)])
        buffer.request(1)
        #expect(recorder.deliveries == [.element(1), .element(2), .element(3)])
        buffer.request(1)
        #expect(recorder.deliveries == [.element(1), .element(2), .element(3), .element(4), .end(nil)])
        buffer.request(.max)
        #expect(starts.value == 1)
        #expect(recorder.deliveries.count == 5)
    }

    @Test("A receiver's answer adds demand; Int.max is no limit")
    func receiverMoreDemand() {
        let buffer = BoundedBuffer<Int>()
        let recorder = DeliveryRecorder(answer: 1)
        recorder.attach(to: buffer)
        buffer.request(1)
        for value in 1...3 { buffer.put(value) }
        #expect(recorder.deliveries == [.element(1), .element(2), .element(3)])

        let unlimited = BoundedBuffer<Int>()
        let other = DeliveryRecorder()
        other.attach(to: unlimited)
        unlimited.request(.max)
        unlimited.request(.max)
        for value in 1...3 { unlimited.put(value) }
        unlimited.finish(.failure(.requestCancelled))
        #expect(other.deliveries.count == 4)
        #expect(other.deliveries.last != .end(nil))
    }

    @Test("A receiver that stops gets nothing more, not even the end")
    func receiverStops() {
        let buffer = BoundedBuffer<Int>()
        let recorder = DeliveryRecorder()
        recorder.attach(to: buffer)
        let stopped = Locked(0)
        buffer.setStopHandler { _ in stopped.update { $0 += 1 } }
        buffer.put(1)
        buffer.consumerStopped()
        buffer.request(5)
        buffer.finish(.success(()))
        #expect(recorder.deliveries.isEmpty)
        #expect(stopped.value == 1)
    }

    @Test("With limit 0, send waits until the receiver has taken the element")
    func rendezvous() async {
        let buffer = BoundedBuffer<Int>(limit: 0)
        let recorder = DeliveryRecorder()
        recorder.attach(to: buffer)
        let first = _Concurrency.Task { await buffer.send(1) }
        #expect(await eventually { buffer.bufferedWeight == 1 })
        #expect(recorder.deliveries.isEmpty)
        buffer.request(1)
        let firstSent = await first.value
        #expect(firstSent)
        #expect(recorder.deliveries == [.element(1)])
        #expect(buffer.bufferedWeight == 0)
    }

    @Test("Producers and demand from many threads: one delivery at a time, each element once")
    func receiverConcurrency() async {
        let buffer = BoundedBuffer<Int>()
        let recorder = DeliveryRecorder()
        recorder.attach(to: buffer)
        // Threads at once are the point; the iterations never wait.
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<250 {
                buffer.put(thread * 1000 + index)
                buffer.request(1)
            }
        }
        buffer.finish(.success(()))
        #expect(!recorder.overlapped)
        #expect(recorder.deliveries.count == 2001)
        #expect(recorder.deliveries.last == .end(nil))
        let values = recorder.deliveries.compactMap { delivery -> Int? in
            if case .element(let value) = delivery { return value }
            return nil
        }
        #expect(Set(values).count == 2000)
        for thread in 0..<8 {
            let own = values.filter { $0 / 1000 == thread }
            #expect(own == own.sorted())
        }
    }

    // MARK: Producer and consumer at once

    @Test("A producer task and a consumer at once: everything arrives, in order, the buffer bounded")
    func concurrentProducerAndConsumer() async throws {
        let buffer = BoundedBuffer<Int>(limit: 16)
        let producer = _Concurrency.Task {
            for value in 0..<5000 {
                guard await buffer.send(value) else { return }
            }
            buffer.finish(.success(()))
        }
        var expected = 0
        var largest = 0
        while case .success(let value?) = await buffer.next() {
            #expect(value == expected)
            expected += 1
            largest = max(largest, buffer.bufferedWeight)
        }
        await producer.value
        #expect(expected == 5000)
        // At most one element over the limit: the one whose producer then paused.
        #expect(largest <= 17)
    }

}
