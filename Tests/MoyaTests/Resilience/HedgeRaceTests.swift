import Testing

@testable import Moya

/// The race of a hedged request's copies, transition by transition: plain values for the copies'
/// attempts and the timer, and times given by the test (nanoseconds since the first copy went).
@Suite("The race of a hedged request's copies, as a state machine")
struct HedgeRaceTests {
    /// A race whose first copy runs attempt `"first"`, went out at 1,000 ns, and may send two
    /// hedges.
    func race(maximumHedges: Int = 2) -> HedgeRace<String, Int> {
        HedgeRace(first: "first", startedAt: 1_000, maximumHedges: maximumHedges)
    }

    @Test("A hedge goes when its delay is over and a place is granted; the first response wins, the others are cancelled with the timer")
    func hedgeThenFirstCopyWins() {
        var race = race()
        #expect(race.hedgeDue() == true)
        #expect(race.placeGranted() == .send(index: 1, armsNext: true))
        #expect(race.copyStarted(1, attempt: "hedge") == true)
        #expect(race.timerSet(7) == nil)
        guard case .decided(let winner, let losers, let timer, let latency, let hedgeWon) = race.copyEnded(0, isResponse: true, now: 51_000) else {
            Issue.record("the first response did not decide the race")
            return
        }
        #expect(winner == 0 && losers == ["hedge"] && timer == 7 && latency == 50_000 && !hedgeWon)
        // The loser's end, later, changes nothing; nor does another hedge's delay.
        guard case .goesOn = race.copyEnded(1, isResponse: false, now: 52_000) else {
            Issue.record("a loser's end decided the race again")
            return
        }
        #expect(race.hedgeDue() == false)
        #expect(!race.wants(1) && race.wants(0))
    }

    @Test("A hedge that answers first wins: the first copy is cancelled, and the hedge counted as won")
    func hedgeWins() {
        var race = race()
        #expect(race.hedgeDue() == true)
        #expect(race.placeGranted() == .send(index: 1, armsNext: true))
        #expect(race.copyStarted(1, attempt: "hedge") == true)
        guard case .decided(let winner, let losers, let timer, let latency, let hedgeWon) = race.copyEnded(1, isResponse: true, now: 31_000) else {
            Issue.record("the hedge's response did not decide the race")
            return
        }
        #expect(winner == 1 && losers == ["first"] && timer == nil && latency == 30_000 && hedgeWon)
        // The first copy, cancelled, may not start another attempt.
        #expect(race.copyStarted(0, attempt: "first, again") == false)
    }

    @Test("A copy's failure does not win while another copy may answer; when every copy sent failed, the last failure is the request's")
    func failuresWaitForTheOthers() {
        var race = race()
        #expect(race.hedgeDue() == true)
        #expect(race.placeGranted() == .send(index: 1, armsNext: true))
        #expect(race.copyStarted(1, attempt: "hedge") == true)
        guard case .goesOn = race.copyEnded(0, isResponse: false, now: 2_000) else {
            Issue.record("a failure won while the hedge ran")
            return
        }
        // The hedge still runs: another copy may go when the delay is over.
        #expect(race.hedgeDue() == true)
        guard case .decided(let winner, let losers, _, let latency, let hedgeWon) = race.copyEnded(1, isResponse: false, now: 3_000) else {
            Issue.record("the last failure did not decide the race")
            return
        }
        #expect(winner == 1 && losers.isEmpty && latency == nil && !hedgeWon)
        #expect(race.placeGranted() == .giveBack, "a place granted after the end goes back")
    }

    @Test("No more than the policy's hedges go: the last one sets no timer, and a later delay asks for no place")
    func maximumHedges() {
        var race = race(maximumHedges: 2)
        #expect(race.hedgeDue() == true)
        #expect(race.placeGranted() == .send(index: 1, armsNext: true))
        #expect(race.hedgeDue() == true)
        #expect(race.placeGranted() == .send(index: 2, armsNext: false))
        #expect(race.hedgeDue() == false)
        #expect(race.placeGranted() == .giveBack)
        #expect(race.sent == 3)
    }

    @Test("A hedge refused a place waits for the next delay; once every copy has ended, none is tried")
    func placeRefused() {
        var race = race()
        #expect(race.hedgeDue() == true)
        #expect(race.placeRefused(), "the timer is set again")
        #expect(race.timerSet(3) == nil)
        #expect(race.timer == 3)
        #expect(race.hedgeDue() == true)
        #expect(race.timer == nil, "a timer that fired is no longer kept")
        // The first copy failed meanwhile, and it was the only one: the race is decided.
        guard case .decided = race.copyEnded(0, isResponse: false, now: 9_000) else {
            Issue.record("the only copy's failure did not decide the race")
            return
        }
        #expect(!race.placeRefused())
    }

    @Test("A timer set while a copy won is stopped at once")
    func staleTimer() {
        var race = race()
        #expect(race.hedgeDue() == true)
        #expect(race.placeGranted() == .send(index: 1, armsNext: true))
        guard case .decided = race.copyEnded(0, isResponse: true, now: 5_000) else {
            Issue.record("the response did not decide the race")
            return
        }
        #expect(race.timerSet(11) == 11)
        #expect(race.timer == nil)
    }

    @Test("A cancel stops every copy and the timer, once; a copy started after it is cancelled, and a place granted goes back")
    func cancel() {
        var race = race()
        #expect(race.hedgeDue() == true)
        #expect(race.placeGranted() == .send(index: 1, armsNext: true))
        #expect(race.copyStarted(1, attempt: "hedge") == true)
        #expect(race.timerSet(4) == nil)
        let (attempts, timer) = race.cancel()
        #expect(attempts == ["first", "hedge"] && timer == 4)
        let again = race.cancel()
        #expect(again.attempts.isEmpty && again.timer == nil)
        #expect(race.copyStarted(1, attempt: "hedge, again") == false)
        #expect(!race.wants(0) && !race.wants(1))
        #expect(race.hedgeDue() == false)
        #expect(race.placeGranted() == .giveBack)
        guard case .goesOn = race.copyEnded(0, isResponse: true, now: 8_000) else {
            Issue.record("a response after the cancel decided the race")
            return
        }
    }

    @Test("A first copy between two attempts (none running) is still in the race: its next attempt joins it")
    func firstCopyBetweenAttempts() {
        var race = HedgeRace<String, Int>(first: nil, startedAt: 0, maximumHedges: 1)
        #expect(race.hedgeDue() == true)
        #expect(race.placeGranted() == .send(index: 1, armsNext: false))
        #expect(race.copyStarted(0, attempt: "first, second attempt") == true)
        guard case .decided(_, let losers, _, let latency, _) = race.copyEnded(1, isResponse: true, now: 700) else {
            Issue.record("the hedge's response did not decide the race")
            return
        }
        #expect(losers == ["first, second attempt"] && latency == 700)
    }
}
