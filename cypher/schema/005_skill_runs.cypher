// Skill runs (:SkillRun), linked to their :Skill and to the :Topic nodes they used.
CREATE CONSTRAINT skill_run_id IF NOT EXISTS FOR (r:SkillRun) REQUIRE r.run_id IS UNIQUE;
CREATE INDEX skill_run_namespace_started IF NOT EXISTS FOR (r:SkillRun) ON (r.namespace, r.started_at);
CREATE INDEX skill_run_namespace_skill IF NOT EXISTS FOR (r:SkillRun) ON (r.namespace, r.skill_id);
