/// The race of a hedged request's copies (``HedgingPolicy``), as a state machine: each event of
/// the race is a transition that says what to do, and does nothing itself. The exchange that
/// runs the race (`HedgedExchange`) keeps it behind its lock, carries out what it answers (sends
/// a copy, sets or stops the timer, cancels the losers, delivers the result) outside the lock,
/// and tests drive it with plain values and times of their own.
///
/// The race begins when the first copy's delay is over, with that copy sent (copy 0). A copy
/// goes when the hedge's timer fires (``hedgeDue()``), the race is not decided, and the stage
/// granted it a free place (``placeGranted()``); otherwise it waits for the next delay
/// (``placeRefused()``). The first response wins, and every other copy is cancelled, once. A
/// copy that fails without a response does not win while another may still answer; when all
/// copies sent have failed, the last failure is the request's.
///
/// `Attempt` is what a copy runs (an attempt to cancel); `Timer` is the handle of the hedge's
/// timer, which the race hands back for stopping once no hedge can follow.
struct HedgeRace<Attempt, Timer> {
    /// The current attempt of each copy, by its number (the first copy's first), while it runs.
    private(set) var attempts: [Attempt?]
    /// Copies sent, the first included.
    private(set) var sent = 1
    /// Copies that ended.
    private(set) var ended = 0
    /// The copy whose result is the request's, once decided.
    private(set) var winner: Int?
    /// Whether the request was cancelled.
    private(set) var isCancelled = false
    /// The hedge's timer, while it is set.
    private(set) var timer: Timer?
    /// How many copies may go beyond the first.
    let maximumHedges: Int
    /// When the first copy went out (nanoseconds of the caller's clock): a winner's latency is
    /// counted from then.
    let startedAt: UInt64

    /// A race whose first copy, sent at `startedAt`, runs `first` (`nil` between two of its
    /// attempts), and which may send up to `maximumHedges` more.
    init(first: Attempt?, startedAt: UInt64, maximumHedges: Int) {
        attempts = [first]
        self.startedAt = startedAt
        self.maximumHedges = maximumHedges
    }

    /// Whether neither a copy won nor the request was cancelled.
    var isOpen: Bool { winner == nil && !isCancelled }

    /// Whether another copy may go: the race is open, a copy sent is still running, and the
    /// policy's number of hedges is not reached.
    private var mayHedge: Bool { isOpen && ended < sent && sent <= maximumHedges }

    /// The hedge's timer fired (or the first copy's delay is over): whether to ask the stage for
    /// a place for the next copy (``placeGranted()`` or ``placeRefused()`` then).
    mutating func hedgeDue() -> Bool {
        timer = nil
        return mayHedge
    }

    /// What to do once the stage has granted the next copy a place.
    enum Grant: Equatable {
        /// Send copy `index` with the place; then, when `armsNext`, set the timer for the
        /// next hedge.
        case send(index: Int, armsNext: Bool)
        /// The race was decided meanwhile: give the place back.
        case giveBack
    }

    /// The stage granted the next copy a place (and took the retry budget's share).
    mutating func placeGranted() -> Grant {
        guard mayHedge else { return .giveBack }
        sent += 1
        return .send(index: sent - 1, armsNext: mayHedge)
    }

    /// The stage had no free place (or no budget) for the next copy: whether to set the timer,
    /// to try again after the next delay.
    func placeRefused() -> Bool {
        mayHedge
    }

    /// The timer for the next hedge was set: it is kept to be stopped with the race. Returns
    /// the timer when it must be stopped at once (the race was decided while it was being set).
    mutating func timerSet(_ handle: Timer) -> Timer? {
        guard isOpen else { return handle }
        timer = handle
        return nil
    }

    /// Copy `index` started `attempt`: whether it may go on (the race is open, or it won). When
    /// it may not, the caller cancels the attempt.
    mutating func copyStarted(_ index: Int, attempt: Attempt) -> Bool {
        guard !isCancelled, winner == nil || winner == index else { return false }
        set(attempt, of: index)
        return true
    }

    /// Whether copy `index`'s result is still wanted: until a copy won or the request was
    /// cancelled, every copy's is.
    func wants(_ index: Int) -> Bool {
        !isCancelled && (winner == nil || winner == index)
    }

    /// How a copy's end moves the race.
    enum End {
        /// Nothing more: a loser ended, or a copy failed while another may still answer.
        case goesOn
        /// Copy `winner`'s result is the request's. The other copies' attempts are to be
        /// cancelled, and `timer`, if set, stopped. `latency` is the winner's, counted from the
        /// first copy's start, when it answered; `hedgeWon` says a hedge (not the first copy)
        /// answered.
        case decided(winner: Int, losers: [Attempt], timer: Timer?, latency: UInt64?, hedgeWon: Bool)
    }

    /// Copy `index` ended, with a response (`isResponse`) or a failure, at `now` (the clock of
    /// ``startedAt``).
    mutating func copyEnded(_ index: Int, isResponse: Bool, now: UInt64) -> End {
        ended += 1
        set(nil, of: index)
        guard isOpen, isResponse || ended == sent else { return .goesOn }
        winner = index
        let losers = attempts.compactMap { $0 }
        attempts = []
        defer { timer = nil }
        return .decided(
            winner: index, losers: losers, timer: timer, latency: isResponse ? now - min(now, startedAt) : nil,
            hedgeWon: isResponse && index > 0)
    }

    /// The request was cancelled: the attempts of every copy still running are to be
    /// cancelled, and the timer, if set, stopped. Once only: a second cancel returns nothing.
    mutating func cancel() -> (attempts: [Attempt], timer: Timer?) {
        isCancelled = true
        defer {
            attempts = []
            timer = nil
        }
        return (attempts.compactMap { $0 }, timer)
    }

    /// Records `attempt` as copy `index`'s current one.
    private mutating func set(_ attempt: Attempt?, of index: Int) {
        while attempts.count <= index { attempts.append(nil) }
        attempts[index] = attempt
    }
}

extension HedgeRace: Sendable where Attempt: Sendable, Timer: Sendable {}
