//! How each AI member of the current team is answered here (docs/architecture.md §14, §14c):
//! the `agents` event the pages show (commands with the member's settings in, env values
//! blanked), and the members a cost cap cannot count.

use agent_chatter::protocol::{AgentReport, Event};

use super::actor::Actor;
use crate::agents::settings;
use crate::agents::{AgentType, Answerer};

impl Actor {
    /// The `agents` event: how each AI member of the current team is answered here.
    pub(super) fn agents_event(&self) -> Event {
        Event::Agents {
            list: self.agent_reports(),
        }
    }

    pub(super) fn agent_reports(&self) -> Vec<AgentReport> {
        let Some(team) = self.session.team() else {
            return Vec::new();
        };
        crate::agents::members(team, &self.agents, self.simulate_all)
            .into_iter()
            .map(|m| {
                // The member with the settings the machine's team file gives its id.
                let member = team.member(&m.member).map(|m| self.machine.dress(m));
                let member = member.as_ref();
                let kind = m
                    .command
                    .as_ref()
                    .and_then(|c| c.output)
                    .unwrap_or(AgentType::of(&m.agent_type));
                // The command as it runs, the member's settings in (docs/architecture.md §14c).
                let command = match (&m.command, member) {
                    (Some(c), Some(member)) => settings::command_for_member(c, kind, member)
                        .ok()
                        .or(m.command.clone()),
                    _ => m.command.clone(),
                };
                let mut run = member.map(|m| m.run.clone()).unwrap_or_default();
                // Names only: a value may be a secret, and the page needs none.
                run.env.values_mut().for_each(String::clear);
                let has_settings = member.is_some_and(|m| m.has_machine_settings());
                AgentReport {
                    runs: matches!(m.answerer, Answerer::Cli(_)),
                    simulated: m.answerer == Answerer::Simulator,
                    // Under --simulate no command is used: none is reported.
                    command: command.filter(|_| !self.simulate_all).map(|c| {
                        std::iter::once(c.command)
                            .chain(c.args)
                            .collect::<Vec<_>>()
                            .join(" ")
                    }),
                    problem: match m.answerer {
                        Answerer::Nobody(why) => Some(why),
                        _ => None,
                    },
                    dir: member.as_ref().and_then(|m| m.base_dir.clone()),
                    source: (has_settings || self.machine.file().is_some())
                        .then(|| self.machine.source().to_string()),
                    settings: run,
                    member: m.member,
                }
            })
            .collect()
    }

    /// When the team sets a cost cap: the members whose CLI reports no cost (Codex, Gemini, a
    /// plain command), so the cap cannot count their runs (docs/architecture.md §14c).
    pub(super) fn uncapped(&self) -> Vec<String> {
        let Some(team) = self.session.team() else {
            return Vec::new();
        };
        if team.settings.max_cost_usd.is_none() {
            return Vec::new();
        }
        crate::agents::members(team, &self.agents, self.simulate_all)
            .into_iter()
            .filter(|m| matches!(m.answerer, Answerer::Cli(_)))
            .filter(|m| {
                let kind = m.command.as_ref().and_then(|c| c.output);
                !kind.unwrap_or(AgentType::of(&m.agent_type)).reports_cost()
            })
            .map(|m| {
                team.member(&m.member)
                    .map_or(m.member.clone(), |t| t.display_name.clone())
            })
            .collect()
    }

    /// When a real agent runs beside them: the demo team's members the simulator stands in for
    /// because their CLI is not installed here (not chosen: not `--simulate`, not `agentType:
    /// "simulated"`), by name. Their replies do not run the real agents they address
    /// (`Actor::stand_in_reply`), which `serve` and `chat` say at start.
    pub(super) fn stand_ins(&self) -> Vec<String> {
        let Some(team) = self.session.team() else {
            return Vec::new();
        };
        let members = crate::agents::members(team, &self.agents, self.simulate_all);
        if self.simulate_all
            || !members
                .iter()
                .any(|m| matches!(m.answerer, Answerer::Cli(_)))
        {
            return Vec::new();
        }
        members
            .into_iter()
            .filter(|m| m.answerer == Answerer::Simulator)
            .filter(|m| {
                agent_chatter::team::normalize_agent_type(&m.agent_type)
                    != agent_chatter::team::SIMULATED
            })
            .map(|m| {
                team.member(&m.member)
                    .map_or(m.member.clone(), |t| t.display_name.clone())
            })
            .collect()
    }
}
