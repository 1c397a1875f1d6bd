import Foundation

/// The one bounded hand-over between a producer and one consumer: a streamed response's chunks
/// (``StreamBuffer``), a request's progress events (`ProgressStream`), and the values of
/// CombineMoya's subscriptions.
///
/// The buffer owns everything between the two sides, behind one lock:
///
/// - **The elements**, in order. Each has a weight (a chunk's byte count, or 1); an element that
///   weighs nothing (an empty chunk) carries nothing and is not kept.
/// - **The limit**, and what happens above it (``Overflow``): the producer pauses until the
///   consumer has taken the buffer down to half the limit, or the oldest elements are dropped.
/// - **The end**: ``finish(_:)``, normally or with an error, handed out after the last element.
/// - **The consumer stopping** (``consumerStopped(cancelled:)``): the elements are dropped, a paused
///   producer is released, and the stop handler is called, once, if the end has not come.
/// - **The waiting consumer**: either an async ``next()``, which a cancelled task leaves with
///   the cancellation error (stopping the buffer), or a receiver (``setReceiver(receive:complete:)``)
///   that is handed elements as far as its demand (``request(_:)``) allows, Combine's way.
///
/// The producer calls ``append(_:)`` and obeys its answer, or, more simply, ``send(_:)`` (an
/// async producer that can wait) or ``put(_:)`` (one that cannot, for a buffer that never
/// pauses). Continuations, callbacks and the receiver run after the lock is released.
///
/// `package`: CombineMoya's subscriptions are consumers of the receiver kind. Only what they
/// call is `package` (the initializer, ``setStart(_:)``, ``setStopHandler(_:)``,
/// ``setReceiver(receive:complete:)``, ``request(_:)``, ``consumerStopped(cancelled:)``, and the
/// producer's ``put(_:)``, ``send(_:)`` and ``finish(_:)``); the rest is internal.
package final class BoundedBuffer<Element: Sendable>: Sendable {
    /// What happens when the elements kept weigh more than the limit.
    package enum Overflow: Sendable {
        /// The producer is told to pause (``AppendResult/pause``), and is called back
        /// (``waitForDemand(_:)``) once the consumer has taken the buffer down to half the limit.
        case pauseProducer
        /// The oldest elements are dropped until the rest fit (the newest is always kept): for
        /// values of which only the latest matter, such as progress.
        case dropOldest
    }

    /// What the producer does after appending an element.
    enum AppendResult: Sendable {
        /// Go on.
        case more
        /// Go on, and call ``BoundedBuffer/wakeConsumer()`` soon: the consumer waits. A producer
        /// that delivers several elements in a burst (one read from the socket) calls it once
        /// after the burst, so that the consumer wakes once for all of them.
        case moreAndWake
        /// Stop until ``BoundedBuffer/waitForDemand(_:)`` calls back.
        case pause
        /// The consumer is gone, or the buffer has ended: stop producing.
        case stopped
    }

    /// A consumer that is handed elements instead of asking for them: its closures.
    ///
    /// Unchecked: the closures (a Combine subscriber's, which is not `Sendable`) are stored once
    /// and only called by the one thread that delivers at a time (`isDelivering`), never
    /// concurrently; the buffer drops them when it ends or stops.
    private struct Receiver: @unchecked Sendable {
        let receive: (Element) -> Int
        let complete: (Result<Void, MoyaError>) -> Void
    }

    /// The producer's start, run on the first demand.
    ///
    /// Unchecked: the closure (a Combine publisher's, which is not `Sendable`) is called at most
    /// once, by the thread that takes it out of the state under the lock.
    private struct Start: @unchecked Sendable {
        let run: () -> Void
    }

    /// An element and its weight, as kept.
    private struct Entry: Sendable {
        let element: Element
        let weight: Int
    }

    private typealias Waiter = UnsafeContinuation<Result<Element?, MoyaError>, Never>

    private struct State: Sendable {
        /// The elements; the slots before `first` are handed out already (the array is
        /// compacted now and then).
        var entries: [Entry?] = []
        var first = 0
        var bufferedWeight = 0
        /// How the buffer ended, once the producer said so; handed out after the last element.
        var end: Result<Void, MoyaError>?
        /// Whether the end (or the cancellation, once stopped) has been handed out: later calls
        /// of `next()` get `nil`.
        var isEndDelivered = false
        /// The consumer waiting in `next()`.
        var waiter: Waiter?
        /// Whether the producer was asked to call `wakeConsumer()` and has not yet.
        var isWakeScheduled = false
        /// Whether the producer was told to pause and has not been called back yet.
        var isProducerPaused = false
        /// The paused producer's callback, once it asked to be called back.
        var resumeProducer: (@Sendable () -> Void)?
        /// Whether demand came before the paused producer asked to be called back.
        var isDemandSignalled = false
        var isClaimed = false
        /// Whether the consumer stopped (or was cancelled).
        var isStopped = false
        /// Whether it stopped because its task, or the stream, was cancelled (rather than
        /// leaving its loop or letting go of the stream).
        var isStoppedByCancellation = false
        /// The weight of every element appended so far, taken or not.
        var appendedWeight = 0
        /// Called when the consumer stops before the end, with whether it was cancelled;
        /// dropped at the end.
        var stopHandler: (@Sendable (_ cancelled: Bool) -> Void)?
        /// The consumer that is handed elements, if it is that kind.
        var receiver: Receiver?
        /// How many more elements the receiver asked for; `Int.max` for no limit.
        var demand = 0
        /// Whether a thread is handing elements to the receiver.
        var isDelivering = false
        /// Starts the producer on the first demand; dropped once run or when the consumer stops.
        var start: Start?

        var hasElements: Bool { first < entries.count }
        var count: Int { entries.count - first }

        mutating func enqueue(_ entry: Entry) {
            entries.append(entry)
            bufferedWeight += entry.weight
        }

        mutating func pop() -> Element {
            let entry = entries[first]!
            entries[first] = nil
            first += 1
            if first == entries.count {
                entries.removeAll(keepingCapacity: true)
                first = 0
            } else if first >= 64, first * 2 >= entries.count {
                entries.removeFirst(first)
                first = 0
            }
            bufferedWeight -= entry.weight
            return entry.element
        }

        mutating func removeAll() {
            entries = []
            first = 0
            bufferedWeight = 0
        }
    }

    /// Above this weight the ``overflow`` rule applies.
    let limit: Int
    /// At or below this weight a paused producer goes on: half the limit.
    let resumeLevel: Int
    /// What happens above the limit.
    let overflow: Overflow
    private let weigh: @Sendable (Element) -> Int
    private let state = Protected(State())

    /// - Parameters:
    ///   - limit:    The most weight kept before `overflow` applies (at least 0; 0 hands over
    ///               one element at a time, the producer waiting until each is taken).
    ///   - overflow: What happens above the limit.
    ///   - weight:   An element's weight; 1 for each, unless given.
    package init(limit: Int = .max, overflow: Overflow = .pauseProducer, weight: @escaping @Sendable (Element) -> Int = { _ in 1 }) {
        self.limit = max(0, limit)
        self.resumeLevel = self.limit / 2
        self.overflow = overflow
        self.weigh = weight
    }

    /// Sets what stops the producer's work when the consumer stops before the end, told
    /// whether the consumer was cancelled (see ``consumerStopped(cancelled:)``). Called at once
    /// when the consumer has stopped already; dropped when the buffer has ended.
    func setStopHandler(_ handler: @escaping @Sendable (_ cancelled: Bool) -> Void) {
        let callNow: Bool? = state.withLock { state in
            if state.end != nil { return nil }
            if state.isStopped { return state.isStoppedByCancellation }
            state.stopHandler = handler
            return nil
        }
        if let cancelled = callNow { handler(cancelled) }
    }

    /// The weight of every element appended so far, whether the consumer took it or not.
    var appendedWeight: Int {
        state.withLock { $0.appendedWeight }
    }

    /// Makes the first demand (the first ``next()``, or ``request(_:)``) start the producer with
    /// `start`, unless the consumer stopped before. Set before the consumer can see the buffer.
    func setStart(_ start: @escaping () -> Void) {
        state.withLock { $0.start = Start(run: start) }
    }

    /// Whether the consumer stopped.
    var isStopped: Bool {
        state.withLock { $0.isStopped }
    }

    /// The weight of the elements kept (for tests).
    var bufferedWeight: Int {
        state.withLock { $0.bufferedWeight }
    }

    /// Whether a consumer waits in ``next()`` (for tests).
    var hasWaitingConsumer: Bool {
        state.withLock { $0.waiter != nil }
    }

    // MARK: - Producer

    /// What `append` does once the lock is released.
    private enum AppendStep {
        case answer(AppendResult)
        case handOver(Waiter, Element, AppendResult)
        case deliver
    }

    /// Keeps `element` for the consumer, and says what the producer does next.
    func append(_ element: Element) -> AppendResult {
        let weight = weigh(element)
        if weight == 0 { return .more }
        let step: AppendStep = state.withLock { state in
            guard !state.isStopped, state.end == nil else { return .answer(.stopped) }
            state.appendedWeight &+= weight
            state.enqueue(Entry(element: element, weight: weight))
            if overflow == .dropOldest {
                while state.bufferedWeight > limit, state.count > 1 { _ = state.pop() }
            }
            if state.receiver != nil { return .deliver }
            guard overflow == .pauseProducer, state.bufferedWeight > limit else {
                if state.waiter != nil, !state.isWakeScheduled {
                    state.isWakeScheduled = true
                    return .answer(.moreAndWake)
                }
                return .answer(.more)
            }
            // Over the limit while the consumer waits (an element heavier than the limit): it
            // gets the first element now, or nothing would ever take the buffer down.
            let result: AppendResult
            guard let waiter = state.waiter else {
                state.isProducerPaused = true
                return .answer(.pause)
            }
            state.waiter = nil
            let first = state.pop()
            if state.bufferedWeight > limit {
                state.isProducerPaused = true
                result = .pause
            } else {
                result = .more
            }
            return .handOver(waiter, first, result)
        }
        switch step {
        case .answer(let result):
            return result
        case .handOver(let waiter, let element, let result):
            waiter.resume(returning: .success(element))
            return result
        case .deliver:
            deliver()
            return state.withLock { state in
                if state.isStopped { return .stopped }
                guard overflow == .pauseProducer, state.bufferedWeight > limit else { return .more }
                state.isProducerPaused = true
                return .pause
            }
        }
    }

    /// Appends `element` and wakes a waiting consumer at once: for a producer that delivers one
    /// element at a time and cannot wait (a buffer that drops the oldest, or has no limit).
    ///
    /// - Returns: `false` when the consumer is gone or the buffer has ended.
    @discardableResult
    package func put(_ element: Element) -> Bool {
        switch append(element) {
        case .more, .pause:
            return true
        case .moreAndWake:
            wakeConsumer()
            return true
        case .stopped:
            return false
        }
    }

    /// Appends `element`, wakes a waiting consumer, and, when the buffer is over its limit,
    /// waits until the consumer has taken it down (or stopped).
    ///
    /// - Returns: `false` when the consumer is gone or the buffer has ended: stop producing.
    package func send(_ element: Element) async -> Bool {
        switch append(element) {
        case .more:
            return true
        case .moreAndWake:
            wakeConsumer()
            return true
        case .pause:
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                waitForDemand { continuation.resume() }
            }
            return !isStopped
        case .stopped:
            return false
        }
    }

    /// Hands the waiting consumer the next element: after ``append(_:)`` answered
    /// ``AppendResult/moreAndWake``, once the producer's burst of elements is in.
    func wakeConsumer() {
        let (waiter, element, producer, isReceiving) = state.withLock {
            state -> (Waiter?, Element?, (@Sendable () -> Void)?, Bool) in
            state.isWakeScheduled = false
            if state.receiver != nil { return (nil, nil, nil, true) }
            guard let waiter = state.waiter, state.hasElements else { return (nil, nil, nil, false) }
            state.waiter = nil
            let element = state.pop()
            return (waiter, element, Self.demandCame(&state, resumeLevel: resumeLevel), false)
        }
        if isReceiving { deliver() }
        producer?()
        if let waiter, let element { waiter.resume(returning: .success(element)) }
    }

    /// Calls `resume` once the consumer has taken the buffer down to ``resumeLevel``, or has
    /// stopped, or the buffer has ended: after ``append(_:)`` answered ``AppendResult/pause``.
    func waitForDemand(_ resume: @escaping @Sendable () -> Void) {
        let resumeNow: Bool = state.withLock { state in
            if state.isDemandSignalled || state.isStopped || state.end != nil || !state.isProducerPaused {
                state.isDemandSignalled = false
                state.isProducerPaused = false
                return true
            }
            state.resumeProducer = resume
            return false
        }
        if resumeNow { resume() }
    }

    /// Ends the buffer after the elements already appended: normally, or with `result`'s error.
    /// The stop handler is dropped and a paused producer released. Later calls do nothing.
    package func finish(_ result: Result<Void, MoyaError>) {
        let (waiter, handOver, producer, handler, isReceiving) = state.withLock {
            state -> (Waiter?, Result<Element?, MoyaError>, (@Sendable () -> Void)?, (@Sendable (Bool) -> Void)?, Bool) in
            guard state.end == nil else { return (nil, .success(nil), nil, nil, false) }
            state.end = result
            let handler = state.stopHandler
            state.stopHandler = nil
            let producer = state.resumeProducer
            state.resumeProducer = nil
            if state.receiver != nil { return (nil, .success(nil), producer, handler, true) }
            guard let waiter = state.waiter else { return (nil, .success(nil), producer, handler, false) }
            state.waiter = nil
            // Elements may still wait for a wake that has not come: they go first.
            if state.hasElements { return (waiter, .success(state.pop()), producer, handler, false) }
            state.isEndDelivered = true
            return (waiter, result.map { nil }, producer, handler, false)
        }
        // The handler is released here, outside the lock, not called.
        _ = handler
        producer?()
        waiter?.resume(returning: handOver)
        if isReceiving { deliver() }
    }

    // MARK: - Consumer

    /// Takes the elements for one consumer: `false` when another has them already. (A buffer
    /// whose consumer starts the producer uses it to start it once.)
    func claim() -> Bool {
        state.withLock { state in
            defer { state.isClaimed = true }
            return !state.isClaimed
        }
    }

    /// The next element; `nil` after the end. The end's error, or the cancellation error once
    /// the consumer stopped, comes once, after the last element. The first call starts the
    /// producer (``setStart(_:)``). Cancelling the calling task stops the buffer
    /// (``consumerStopped(cancelled:)``) and returns ``MoyaError/requestCancelled``; a task cancelled
    /// before the first call never starts the producer.
    func next() async -> Result<Element?, MoyaError> {
        if _Concurrency.Task.isCancelled {
            consumerStopped(cancelled: true)
            let result = state.withLock { Self.take(&$0, resumeLevel: resumeLevel) }
            return result.value ?? .success(nil)
        }
        // The common case: an element, or the end, is already there. The first call starts the
        // producer before it looks.
        let first = state.withLock { state -> (value: Result<Element?, MoyaError>?, producer: (@Sendable () -> Void)?, start: Start?) in
            if !state.isStopped, let start = state.start {
                state.start = nil
                return (nil, nil, start)
            }
            let taken = Self.take(&state, resumeLevel: resumeLevel)
            return (taken.value, taken.producer, nil)
        }
        var (result, producer) = (first.value, first.producer)
        if let start = first.start {
            start.run()
            (result, producer) = state.withLock { Self.take(&$0, resumeLevel: resumeLevel) }
        }
        producer?()
        if let result { return result }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: Waiter) in
                let (ready, producer) = state.withLock { state in
                    let taken = Self.take(&state, resumeLevel: resumeLevel)
                    if taken.value == nil { state.waiter = continuation }
                    return taken
                }
                producer?()
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            consumerStopped(cancelled: true)
        }
    }

    /// The next element, or the end, when one is there without waiting (`nil` otherwise), and
    /// the paused producer's callback when taking the element made room.
    private static func take(_ state: inout State, resumeLevel: Int) -> (value: Result<Element?, MoyaError>?, producer: (@Sendable () -> Void)?) {
        if !state.isStopped, state.hasElements {
            let element = state.pop()
            return (.success(element), demandCame(&state, resumeLevel: resumeLevel))
        }
        let end: Result<Void, MoyaError>? = state.isStopped ? .failure(.requestCancelled) : state.end
        guard let end else { return (nil, nil) }
        if state.isEndDelivered { return (.success(nil), nil) }
        state.isEndDelivered = true
        return (end.map { nil }, nil)
    }

    /// After the consumer took an element: the paused producer's callback when the buffer is
    /// down to `resumeLevel` (or a note that demand came, if it has not asked yet).
    private static func demandCame(_ state: inout State, resumeLevel: Int) -> (@Sendable () -> Void)? {
        guard state.isProducerPaused, state.bufferedWeight <= resumeLevel else { return nil }
        if let resume = state.resumeProducer {
            state.resumeProducer = nil
            state.isProducerPaused = false
            return resume
        }
        state.isDemandSignalled = true
        return nil
    }

    /// The consumer stopped (it left its loop, dropped the buffer, failed, was cancelled): the
    /// elements are dropped, a waiting consumer gets the cancellation error, a paused producer
    /// is released, the receiver is let go, and the stop handler is called once, unless the
    /// buffer had ended (there is no work left to stop). Later calls do nothing.
    ///
    /// - Parameter cancelled: Whether the consumer was cancelled, rather than done with the
    ///   stream; by default, whether the calling task is cancelled (the consumer's, when it lets
    ///   go of the stream).
    package func consumerStopped(cancelled: Bool = _Concurrency.Task.isCancelled) {
        let (waiter, producer, handler, receiver, start) = state.withLock {
            state -> (Waiter?, (@Sendable () -> Void)?, (@Sendable (Bool) -> Void)?, Receiver?, Start?) in
            guard !state.isStopped else { return (nil, nil, nil, nil, nil) }
            state.isStopped = true
            state.isStoppedByCancellation = cancelled
            state.removeAll()
            let waiter = state.waiter
            state.waiter = nil
            if waiter != nil { state.isEndDelivered = true }
            let producer = state.resumeProducer
            state.resumeProducer = nil
            let handler = state.end == nil ? state.stopHandler : nil
            state.stopHandler = nil
            let receiver = state.receiver
            state.receiver = nil
            let start = state.start
            state.start = nil
            return (waiter, producer, handler, receiver, start)
        }
        // Released here, outside the lock: a subscriber's teardown may call back.
        _ = (receiver, start)
        handler?(cancelled)
        producer?()
        waiter?.resume(returning: .failure(.requestCancelled))
    }

    // MARK: - Receiver

    /// Makes the consumer one that is handed elements instead of asking with ``next()``: each
    /// element goes to `receive` as far as the demand (``request(_:)``) allows, and `receive`
    /// answers with more demand (0 for none); after the last element, `complete` gets the end,
    /// whatever the demand. One thread at a time calls them, never with the lock held. Set
    /// once, before the producer starts; let go at the end or when the consumer stops.
    ///
    /// - Parameters:
    ///   - receive:  Takes an element and returns how many more it asks for (`Int.max` for no
    ///               limit).
    ///   - complete: Takes the end.
    func setReceiver(receive: @escaping (Element) -> Int, complete: @escaping (Result<Void, MoyaError>) -> Void) {
        state.withLock { $0.receiver = Receiver(receive: receive, complete: complete) }
    }

    /// Makes the consumer a subscriber (``setReceiver(receive:complete:)``) whose first demand
    /// starts the producer: `start` gets the buffer, starts producing into it, and returns what
    /// stops that work when the consumer stops before the end (``setStopHandler(_:)``, called at
    /// once when it stopped meanwhile). Set once, before the consumer can see the buffer: the
    /// one way in for a subscriber of another module (CombineMoya's subscriptions).
    ///
    /// - Parameters:
    ///   - receive:  Takes an element and returns how many more it asks for (`Int.max` for no
    ///               limit).
    ///   - complete: Takes the end.
    ///   - start:    Starts the producer; returns its stop handler, told whether the consumer
    ///               was cancelled.
    package func subscribe(
        receive: @escaping (Element) -> Int, complete: @escaping (Result<Void, MoyaError>) -> Void,
        start: @escaping (BoundedBuffer<Element>) -> @Sendable (_ cancelled: Bool) -> Void
    ) {
        setReceiver(receive: receive, complete: complete)
        setStart { [weak self] in
            guard let self else { return }
            self.setStopHandler(start(self))
        }
    }

    /// Adds `demand` (`Int.max` for no limit) for the receiver, starts the producer on the
    /// first demand (``setStart(_:)``), and hands the receiver what is there.
    package func request(_ demand: Int) {
        guard demand > 0 else { return }
        let start: Start? = state.withLock { state in
            guard !state.isStopped else { return nil }
            state.demand = Self.adding(state.demand, demand)
            defer { state.start = nil }
            return state.start
        }
        start?.run()
        deliver()
    }

    /// `demand` plus `more`, where `Int.max` stands for no limit.
    private static func adding(_ demand: Int, _ more: Int) -> Int {
        let (sum, overflow) = demand.addingReportingOverflow(max(0, more))
        return overflow ? .max : sum
    }

    /// One step of handing elements to the receiver.
    private enum DeliveryStep {
        case element(Element, producer: (@Sendable () -> Void)?)
        case end(Result<Void, MoyaError>)
        case idle
    }

    /// Hands the receiver what is buffered, as far as its demand allows, then the end. Does
    /// nothing while another thread does it: that one goes on until nothing is left to do.
    private func deliver() {
        let receiver: Receiver? = state.withLock { state in
            guard !state.isDelivering, !state.isStopped, let receiver = state.receiver else { return nil }
            state.isDelivering = true
            return receiver
        }
        guard let receiver else { return }
        var more = 0
        while true {
            let step: DeliveryStep = state.withLock { state in
                state.demand = Self.adding(state.demand, more)
                guard !state.isStopped, state.receiver != nil else {
                    state.isDelivering = false
                    return .idle
                }
                if state.demand > 0, state.hasElements {
                    if state.demand != .max { state.demand -= 1 }
                    let element = state.pop()
                    return .element(element, producer: Self.demandCame(&state, resumeLevel: resumeLevel))
                }
                if !state.hasElements, let end = state.end {
                    state.receiver = nil
                    state.isEndDelivered = true
                    state.isDelivering = false
                    return .end(end)
                }
                state.isDelivering = false
                return .idle
            }
            switch step {
            case .element(let element, let producer):
                producer?()
                more = receiver.receive(element)
            case .end(let end):
                receiver.complete(end)
                return
            case .idle:
                return
            }
        }
    }
}
