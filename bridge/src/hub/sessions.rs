//! The sessions the actor opens: a stored one replayed, a new one created, a fork, a rename,
//! an unused one discarded, and the open one reloaded from the database after a write failed.

use agent_chatter::activity::RunActivity;
use agent_chatter::conversation::Action;
use agent_chatter::protocol::{Event, Forked};
use agent_chatter::session::{Fact, Session};
use agent_chatter::team::Team;

use super::actor::{drain, Actor};
use super::HubError;
use crate::agents::machine::MachineSettings;
use crate::clock::now;
use crate::store::Store;

impl Actor {
    pub(super) fn open(&mut self, id: Option<i64>) -> Result<(), HubError> {
        self.open_forked(id, None)
    }

    /// [`Self::open`]; `forked_from`: the session it was just forked from, which every page
    /// is told with the `session` event (`forked`), with the message number of the fork.
    fn open_forked(&mut self, id: Option<i64>, forked_from: Option<i64>) -> Result<(), HubError> {
        let created = id.is_none();
        let (id, session) = match id {
            Some(id) => {
                // A session another bridge runs is refused; nothing changes here.
                self.store.lease(id)?;
                match reopen(&self.store, id) {
                    Ok(session) => (id, session),
                    Err(e) => {
                        if id != self.session_id {
                            self.store.release(id);
                        }
                        return Err(e);
                    }
                }
            }
            None => {
                let team = self
                    .session
                    .team()
                    .cloned()
                    .unwrap_or_else(agent_chatter::demo::team);
                let (id, session) = create(&mut self.store, team)?;
                self.store.lease(id)?;
                // The team shown goes on, with the settings of its file.
                if let Err(e) = self.store.remember_team_file(id, self.machine.file()) {
                    eprintln!("bridge: the team file of session {id} was not remembered: {e}");
                }
                (id, session)
            }
        };
        if !created {
            let remembered = self.store.team_file(id).unwrap_or_else(|e| {
                eprintln!("bridge: the team file of session {id} could not be read: {e}");
                None
            });
            let (machine, note) = MachineSettings::resume(id, remembered);
            if let Some(note) = note {
                eprintln!("agent-chatter: warning: {note}");
                self.publish(Event::Error { message: note });
                // Said once: the file as it is now is the one the session runs with.
                let _ = self.store.remember_team_file(id, machine.file());
            }
            self.machine = machine;
        }
        // The session left keeps its run's record, so its next open says how the run ended
        // (docs/architecture.md §14c "Interrupted runs"); noted while its lease is still held.
        let stopped = if self.unstored.is_some() {
            Some("its session was left before its outcome could be written")
        } else if self.running.is_some() {
            Some("its session was left while it ran")
        } else {
            None
        };
        if let Some(why) = stopped {
            if let Err(e) = self.store.run_stopped(self.session_id, why) {
                eprintln!(
                    "bridge: why session {}'s run stopped was not noted: {e}",
                    self.session_id
                );
            }
        }
        if id != self.session_id {
            // A session this bridge made and nothing was done in is not kept: a page asking
            // for new sessions again and again leaves one, not a list of empty ones.
            self.discard_if_unused();
            self.store.release(self.session_id);
        }
        if let Some(running) = self.running.take() {
            let _ = running.cancel.send(());
        }
        // Like a running delivery's, an unwritten outcome is not recorded once its session
        // is left: the run is recorded as interrupted when it is reopened.
        self.unstored = None;
        crate::debug::session_opened(id, created, &session);
        self.session_id = id;
        self.created = created;
        self.opening += 1;
        self.session = session;
        let forked = forked_from.map(|from| Forked {
            from,
            at: self.session.messages().len() as u64,
        });
        self.publish(self.session_event_forked(forked));
        self.publish(self.agents_event());
        self.publish_sessions();
        let actions = drain(&mut self.session);
        self.perform_opened(actions);
        Ok(())
    }

    /// Names session `id` (see [`Hub::rename`](super::Hub::rename)); every page gets the new
    /// list.
    pub(super) fn rename(&mut self, id: i64, name: &str) -> Result<(), HubError> {
        let renamed = agent_chatter::library::session_name(name)
            .and_then(|name| self.store.rename(id, &name).map_err(|e| e.to_string()))
            .map_err(|why| HubError::Library {
                what: "rename",
                why,
            });
        if renamed.is_ok() {
            self.publish_sessions();
        }
        renamed
    }

    /// A new session of the first `upto` facts of session `id`, opened (see
    /// [`Hub::fork`](super::Hub::fork)).
    pub(super) fn fork(&mut self, id: i64, upto: u64) -> Result<(), HubError> {
        let fork = self
            .store
            .fork(id, upto, now().0 as i64)
            .map_err(|e| HubError::Library {
                what: "fork",
                why: e.to_string(),
            })?;
        self.open_forked(Some(fork), Some(id))
    }

    pub(super) fn discard_if_unused(&mut self) {
        if self.created && self.session.facts().len() == 1 {
            if let Err(e) = self.store.delete_session(self.session_id) {
                eprintln!(
                    "bridge: the unused session {} was not removed: {e}",
                    self.session_id
                );
            }
        }
    }

    /// What the session's ACP runs did: each kept run's, then the run in flight's so far.
    fn activity(&self) -> Vec<RunActivity> {
        let mut runs = self.store.activity(self.session_id).unwrap_or_default();
        let streamed = self.streamed.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = streamed.as_ref().filter(|s| !s.activity.is_empty()) {
            runs.retain(|r| !(r.message == s.message && r.to == s.to));
            runs.push(RunActivity {
                message: s.message.clone(),
                to: s.to.clone(),
                items: s.activity.items().to_vec(),
            });
        }
        runs
    }

    /// The `session` event: the whole log.
    pub(super) fn session_event(&self) -> Event {
        self.session_event_forked(None)
    }

    /// The `session` event, saying the fork that made the session when it was just made.
    fn session_event_forked(&self, forked: Option<Forked>) -> Event {
        Event::Session {
            id: self.session_id,
            facts: self.session.facts().to_vec(),
            // Only for showing: a database that cannot say leaves the page without them.
            sent: self.store.sent(self.session_id).unwrap_or_default(),
            activity: self.activity(),
            forked,
        }
    }

    /// After a fact was not stored: the session becomes what the database holds (the same
    /// log, or one another bridge on the same file has added to) and every page is sent it.
    /// The delivery the replay has in flight is already running here, or its outcome is the
    /// fact that failed (which its caller keeps: `!perform`), or it belongs to the bridge that
    /// wrote those facts (`!perform` too): then it is not performed again. Otherwise it is, so
    /// a session never waits on a run that nobody makes.
    pub(super) fn reload(&mut self, perform: bool) {
        let Ok(facts) = self.store.facts(self.session_id) else {
            return;
        };
        if let Ok(mut session) = Session::replay(facts) {
            let actions = drain(&mut session);
            self.session = session;
            self.publish(self.session_event());
            if perform && self.running.is_none() && self.unstored.is_none() {
                self.perform(actions);
            }
        }
    }

    /// Performs the actions pending in a session just opened or resumed, where the delivery
    /// due may be a run that began and never ended ([`Actor::interrupted`]).
    pub(super) fn perform_opened(&mut self, actions: Vec<Action>) {
        self.opened = true;
        self.perform(actions);
        self.opened = false;
    }
}

/// A new session in `store` that starts with `team` (its `setTeam` fact committed).
pub(super) fn create(store: &mut Store, team: Team) -> Result<(i64, Session), HubError> {
    let title = team.name.clone();
    let mut fact = Fact::set_team(team);
    // Stored as the session keeps it: without machine settings (docs/architecture.md §14c).
    fact.strip_machine_settings();
    let mut session = Session::new();
    session.apply(&fact)?;
    let id = store.create_session(&title, now().0 as i64, &fact)?;
    Ok((id, session))
}

/// Session `id` of `store`, replayed from its facts.
pub(super) fn reopen(store: &Store, id: i64) -> Result<Session, HubError> {
    let facts = store.facts(id)?;
    Session::replay(facts).map_err(|error| HubError::DoesNotReplay { id, error })
}
